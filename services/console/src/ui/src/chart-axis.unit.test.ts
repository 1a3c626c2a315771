import { describe, expect, it } from 'vitest'
import { axisTime, legendRow, TIME_AXIS_SPACE_PX } from './chart-axis.js'

/** A local time, seconds since the epoch (as uPlot's time scale has it). */
const local = (h: number, m: number, s: number) => new Date(2026, 11, 1, h, m, s).getTime() / 1000
/** A UTC time, seconds since the epoch. */
const utc = (h: number, m: number, s: number) => Date.UTC(2026, 11, 1, h, m, s) / 1000

describe('axisTime', () => {
  it('when ticks are a minute or more apart, then each label is one short 24-hour HH:MM', () => {
    expect(axisTime(local(9, 30, 0), 60, 'local')).toBe('09:30')
    expect(axisTime(local(21, 5, 0), 300, 'local')).toBe('21:05')
  })

  it('when ticks are under a minute apart, then the seconds are shown too', () => {
    expect(axisTime(local(9, 30, 30), 30, 'local')).toBe('09:30:30')
  })

  it('when the page shows UTC, then the labels are UTC times', () => {
    expect(axisTime(utc(0, 5, 10), 10, 'utc')).toBe('00:05:10')
    expect(axisTime(utc(23, 59, 0), 60, 'utc')).toBe('23:59')
  })

  it('when labels are drawn at the axis font, then the least tick spacing leaves room for the longest', () => {
    // 12 px system-ui digits and colons are at most ~7 px wide; keep a gap of a few px besides.
    const longest = Math.max(
      axisTime(local(23, 59, 59), 1, 'local').length,
      axisTime(local(23, 59, 0), 60, 'local').length,
    )
    expect(longest * 7 + 10).toBeLessThanOrEqual(TIME_AXIS_SPACE_PX)
  })
})

describe('legendRow', () => {
  const times = [100, 110, 120]
  const lines = [
    [1, null, 3],
    [4, 5, 6],
  ]

  it('when a point is hovered, then its time and every value there', () => {
    expect(legendRow(times, lines, 1)).toEqual({ at: 110, hovered: true, values: [null, 5] })
  })

  it('when nothing is hovered, then the latest point', () => {
    expect(legendRow(times, lines, null)).toEqual({ at: 120, hovered: false, values: [3, 6] })
  })

  it('when the chart has no point, then no time and no values', () => {
    expect(legendRow([], [[], []], null)).toEqual({ at: null, hovered: false, values: [null, null] })
  })
})
