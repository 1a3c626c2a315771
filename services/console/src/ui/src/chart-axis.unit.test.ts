import { describe, expect, it } from 'vitest'
import { axisTime, TIME_AXIS_SPACE_PX } from './chart-axis.js'

/** A local time, seconds since the epoch (as uPlot's time scale has it). */
const local = (h: number, m: number, s: number) => new Date(2026, 11, 1, h, m, s).getTime() / 1000

describe('axisTime', () => {
  it('when ticks are a minute or more apart, then each label is one short 24-hour HH:MM', () => {
    expect(axisTime(local(9, 30, 0), 60)).toBe('09:30')
    expect(axisTime(local(21, 5, 0), 300)).toBe('21:05')
  })

  it('when ticks are under a minute apart, then the seconds are shown too', () => {
    expect(axisTime(local(9, 30, 30), 30)).toBe('09:30:30')
  })

  it('when labels are drawn at the axis font, then the least tick spacing leaves room for the longest', () => {
    // 12 px system-ui digits and colons are at most ~7 px wide; keep a gap of a few px besides.
    const longest = Math.max(axisTime(local(23, 59, 59), 1).length, axisTime(local(23, 59, 0), 60).length)
    expect(longest * 7 + 10).toBeLessThanOrEqual(TIME_AXIS_SPACE_PX)
  })
})
