/** The charts' time axis: where its ticks go and how they are labelled (pure; no DOM, no uPlot code). */
import type uPlot from 'uplot'

/**
 * A time axis' tick label: local 24-hour `HH:MM`, or `HH:MM:SS` when the ticks are under a minute
 * apart. One short line per tick, so a label fits the axis' tick spacing (`TIME_AXIS_SPACE_PX`).
 * @param seconds the tick, seconds since the epoch
 * @param incrSeconds the spacing of the ticks, seconds
 */
export function axisTime(seconds: number, incrSeconds: number): string {
  const date = new Date(seconds * 1000)
  const pad = (n: number) => String(n).padStart(2, '0')
  const minutes = `${pad(date.getHours())}:${pad(date.getMinutes())}`
  return incrSeconds < 60 ? `${minutes}:${pad(date.getSeconds())}` : minutes
}

/**
 * Least pixels between two x ticks. uPlot's default (50) lets its `9:30am` labels touch or overlap
 * on a half-width chart; with 80 and one short line (`axisTime`: at most 8 characters of the 12 px
 * axis font, about 55 px) a label never reaches its neighbour.
 */
export const TIME_AXIS_SPACE_PX = 80

/** The x axis: ticks at least `TIME_AXIS_SPACE_PX` apart, each labelled by `axisTime`. */
export const timeAxis: uPlot.Axis = {
  space: TIME_AXIS_SPACE_PX,
  values: (_plot, splits, _axis, _space, incr) => splits.map((s) => axisTime(s, incr)),
}
