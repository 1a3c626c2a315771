/** Default `batchBudgetMs`: 20 ms of handler time per batch (more with a slow database, see `batchSize`). */
export const DEFAULT_BATCH_BUDGET_MS = 20

/**
 * Transactions' worth of overhead a batch may hold in handler time when that is more than the
 * budget: when the database is slow, the time around each handler is what batching saves.
 */
const OVERHEAD_FACTOR = 10

/** Weight of the newest time in a moving average: about the last ten count. */
const NEWEST_WEIGHT = 0.2

/**
 * The pace of one handler queue: moving averages of its handlers' running time and of the time a
 * transaction spends around them (waiting for a connection, BEGIN, inbox INSERT, COMMIT).
 */
export interface HandlerPace {
  /** The moving average of a handler's running time, ms; undefined until a first handler finished. */
  readonly averageMs: number | undefined
  /** The moving average of a transaction's time besides its handlers, ms; undefined until one ended. */
  readonly overheadMs: number | undefined
  /** Adds one handler's running time, ms (handlers that threw included: they held the transaction too). */
  record(ms: number): void
  /** Adds one transaction's time besides its handlers' (its whole time less theirs), ms. */
  recordOverhead(ms: number): void
}

/** The moving average after `sample`: the sample itself when there is none yet. */
const moved = (average: number | undefined, sample: number): number =>
  average === undefined ? sample : average + NEWEST_WEIGHT * (sample - average)

/** Creates the `HandlerPace` of one handler queue, unmeasured. */
export function createHandlerPace(): HandlerPace {
  let averageMs: number | undefined
  let overheadMs: number | undefined
  return {
    get averageMs() {
      return averageMs
    },
    get overheadMs() {
      return overheadMs
    },
    record(ms) {
      averageMs = moved(averageMs, ms)
    },
    recordOverhead(ms) {
      overheadMs = moved(overheadMs, Math.max(0, ms))
    },
  }
}

/**
 * Deliveries the next transaction of a handler queue takes, from the queue's `pace` (all in ms):
 * as many handlers as fit in the allowance at their average time, at least 1 and at most `max`.
 * The allowance, `budgetMs` or ten times the transaction overhead when that is more, bounds how
 * long a message waits behind the others of its transaction; it grows with a slow database, where
 * batching saves the most. 1 while the handlers are unmeasured; `max` when the budget is infinite.
 * Pure.
 */
export function batchSize(
  pace: Pick<HandlerPace, 'averageMs' | 'overheadMs'>,
  budgetMs: number,
  max: number,
): number {
  if (budgetMs === Number.POSITIVE_INFINITY) return max
  const { averageMs, overheadMs = 0 } = pace
  if (averageMs === undefined) return 1
  if (averageMs <= 0) return max
  const allowanceMs = Math.max(budgetMs, OVERHEAD_FACTOR * overheadMs)
  return Math.max(1, Math.min(max, Math.floor(allowanceMs / averageMs)))
}
