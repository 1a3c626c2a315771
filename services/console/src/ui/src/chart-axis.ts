/** The charts' time axis and legend: how times are labelled (pure; no DOM, no uPlot code). */
import type uPlot from 'uplot'
import { timeOfDay, type Zone } from './format.js'

/**
 * A time axis' tick label in `zone`: 24-hour `HH:MM`, or `HH:MM:SS` when the ticks are under a minute
 * apart. One short line per tick, so a label fits the axis' tick spacing (`TIME_AXIS_SPACE_PX`).
 * @param seconds the tick, seconds since the epoch
 * @param incrSeconds the spacing of the ticks, seconds
 */
export function axisTime(seconds: number, incrSeconds: number, zone: Zone): string {
  const time = timeOfDay(new Date(seconds * 1000).toISOString(), zone)
  return incrSeconds < 60 ? time : time.slice(0, 5)
}

/**
 * Least pixels between two x ticks. uPlot's default (50) lets its `9:30am` labels touch or overlap
 * on a half-width chart; with 80 and one short line (`axisTime`: at most 8 characters of the 12 px
 * axis font, about 55 px) a label never reaches its neighbour.
 */
export const TIME_AXIS_SPACE_PX = 80

/** The x axis in `zone`: ticks at least `TIME_AXIS_SPACE_PX` apart, each labelled by `axisTime`. */
export const timeAxis = (zone: Zone): uPlot.Axis => ({
  space: TIME_AXIS_SPACE_PX,
  values: (_plot, splits, _axis, _space, incr) => splits.map((s) => axisTime(s, incr, zone)),
})

/** What a chart's legend shows: the time of one point and each line's value there. */
export interface LegendRow {
  /** The point's x, seconds since the epoch; null when the chart has no point. */
  at: number | null
  /** True for the point under the cursor; false for the latest point, shown while nothing is hovered. */
  hovered: boolean
  values: (number | null)[]
}

/**
 * The legend's row: the point under the cursor (`hoveredIdx`, uPlot's `cursor.idx`), else the latest
 * point, so the legend never reads `--` while the chart has data.
 * @param times the x values, seconds since the epoch
 * @param lines each line's values, aligned with `times`
 */
export function legendRow(times: number[], lines: (number | null)[][], hoveredIdx: number | null): LegendRow {
  const hovered = hoveredIdx !== null && hoveredIdx >= 0 && hoveredIdx < times.length
  const idx = hovered ? hoveredIdx : times.length - 1
  if (idx < 0) return { at: null, hovered: false, values: lines.map(() => null) }
  return { at: times[idx] ?? null, hovered, values: lines.map((values) => values[idx] ?? null) }
}
