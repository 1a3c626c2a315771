/**
 * Default `batchBudgetMs`: unbounded, so batches are sized by `batchMax` alone and the pace is not
 * consulted. A budget (20 ms suits handlers that wait on I/O outside the database) is opt-in: in the
 * fleet, whose handlers write to the database, a 20 ms budget ran those handlers one per transaction
 * (each takes about as long as the transaction around it) and cost 35 % more CPU per saga
 * (`npm run load -- --rate 100`, 2026-12-06: 25-29 ms against 18-20 ms).
 */
export const DEFAULT_BATCH_BUDGET_MS = Number.POSITIVE_INFINITY

/** Weight of the newest handler time in the moving average: about the last ten handlers count. */
const NEWEST_WEIGHT = 0.2

/**
 * The pace of one handler queue: moving averages of its handlers' running time and of the time a
 * transaction spends around them (connection, BEGIN, inbox INSERT, COMMIT).
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
 * Deliveries the next transaction of a handler queue takes, from the queue's `pace` (all in ms).
 * Batching pays when the transaction around a handler costs more than the handler: a batch saves
 * that overhead per message, but its handlers run one after another while single deliveries run
 * side by side on the free slots. So a delivery runs alone while the pace is unmeasured and when
 * the average handler takes as long as the overhead or longer; else the batch is as many handlers
 * as fit in `budgetMs`, at least 1 and at most `max`. An infinite budget is always `max` (batches
 * as full as the waiting deliveries allow, the pace not consulted). Pure.
 */
export function batchSize(
  pace: Pick<HandlerPace, 'averageMs' | 'overheadMs'>,
  budgetMs: number,
  max: number,
): number {
  if (budgetMs === Number.POSITIVE_INFINITY) return max
  const { averageMs, overheadMs } = pace
  if (averageMs === undefined || overheadMs === undefined) return 1
  if (averageMs >= overheadMs) return 1
  if (averageMs <= 0) return max
  return Math.max(1, Math.min(max, Math.floor(budgetMs / averageMs)))
}
