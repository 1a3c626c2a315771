/**
 * Default `batchBudgetMs`: the handler time one batch transaction may hold, ms. Handlers slower than
 * this run one per transaction, side by side on the free slots.
 */
export const DEFAULT_BATCH_BUDGET_MS = 20

/** Weight of the newest handler time in the moving average: about the last ten handlers count. */
const NEWEST_WEIGHT = 0.2

/** The pace of one handler queue: a moving average of its handlers' running time. */
export interface HandlerPace {
  /** The moving average of a handler's running time, ms; undefined until a first handler finished. */
  readonly averageMs: number | undefined
  /** Adds one handler's running time, ms (handlers that threw included: they held the transaction too). */
  record(ms: number): void
}

/** Creates the `HandlerPace` of one handler queue, unmeasured. */
export function createHandlerPace(): HandlerPace {
  let averageMs: number | undefined
  return {
    get averageMs() {
      return averageMs
    },
    record(ms) {
      averageMs = averageMs === undefined ? ms : averageMs + NEWEST_WEIGHT * (ms - averageMs)
    },
  }
}

/**
 * Deliveries the next transaction of a handler queue takes: as many handlers as fit in `budgetMs`
 * at `averageMs` each, at least 1 and at most `max`. Unmeasured (`averageMs` undefined) it is 1, so
 * the first deliveries run alone until the handler's pace is known; an infinite budget is always
 * `max` (batches as full as the waiting deliveries allow). Pure; all durations in ms.
 */
export function batchSize(averageMs: number | undefined, budgetMs: number, max: number): number {
  if (budgetMs === Number.POSITIVE_INFINITY) return max
  if (averageMs === undefined) return 1
  if (averageMs <= 0) return max
  return Math.max(1, Math.min(max, Math.floor(budgetMs / averageMs)))
}
