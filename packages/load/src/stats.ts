/** Pure arithmetic of a load run: percentiles, the backlog over time, rates. No I/O. */

/** Percentile of already sorted values by nearest rank (p in 0..100); NaN for no values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

/** Values sorted ascending (a copy). */
export const sorted = (values: Iterable<number>): number[] => [...values].sort((a, b) => a - b)

/** One order as the harness saw it at the end: created and (when terminal) finished, epoch ms. */
export interface SagaTimes {
  createdAt: number
  /** When the order reached CONFIRMED or CANCELLED; undefined while it is still PENDING. */
  terminalAt: number | undefined
}

/**
 * The largest number of sagas in flight at once (created, not yet terminal), from the orders' own
 * timestamps: a sweep over +1 at each creation and -1 at each terminal time. An order still pending
 * at the end counts as in flight from its creation on. Ties: a terminal event at the same ms as a
 * creation is counted first, so back-to-back sagas are not double counted.
 */
export function largestBacklog(sagas: readonly SagaTimes[]): { size: number; at: number | undefined } {
  const events: Array<[time: number, delta: number]> = []
  for (const saga of sagas) {
    events.push([saga.createdAt, 1])
    if (saga.terminalAt !== undefined) events.push([saga.terminalAt, -1])
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let current = 0
  let size = 0
  let at: number | undefined
  for (const [time, delta] of events) {
    current += delta
    if (current > size) {
      size = current
      at = time
    }
  }
  return { size, at }
}

/**
 * Completed sagas per second over the run: terminal orders divided by the span from the first
 * creation to the last terminal time (so a fleet that falls behind shows its real pace, not the
 * offered rate). 0 when nothing completed.
 */
export function completedPerSecond(sagas: readonly SagaTimes[]): number {
  const done = sagas.filter((s) => s.terminalAt !== undefined)
  if (done.length === 0) return 0
  const first = Math.min(...sagas.map((s) => s.createdAt))
  const last = Math.max(...done.map((s) => s.terminalAt!))
  return last > first ? done.length / ((last - first) / 1_000) : 0
}

/** `n` with thousands separators and `digits` decimals, e.g. `1,234.5`. */
export const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : 'n/a'
