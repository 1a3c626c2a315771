import type { Database } from '@saga/messaging'
import type { Logger } from '@saga/messaging/parts'
import { noMetrics, type OrderMetrics } from '../metrics.js'
import type { Tx } from '../plugins/db.js'
import type { Announced } from '../reactions/cancel-order.js'
import { claimDueDeadlines, type ClaimResult } from './claim.js'

/** Options of `createDeadlineScheduler`. */
export interface DeadlineSchedulerOptions {
  /** Opens the claim's transaction; in the app `messaging`, whose transaction wakes the relay to publish the OrderCancelled rows at once. */
  database: Database<Tx>
  logger: Logger
  metrics?: OrderMetrics | undefined
  /** Most orders cancelled per transaction; a full batch is followed by the next at once. Default 100. */
  batchSize?: number | undefined
  /**
   * Longest sleep, ms (default 30,000): the cap that recovers a wake-up nobody told this instance of
   * (an order another instance created with an earlier deadline than any this one knows).
   */
  maxSleepMs?: number | undefined
  /**
   * Sleep, ms, when a due order is locked by someone else (another instance claiming it, a reaction
   * or a customer's cancel at work on it), and the first back-off after an error (doubling to
   * `maxSleepMs`). Default 1,000: what keeps the scheduler from polling fast.
   */
  retryMs?: number | undefined
}

/** What the scheduler has done since it was made (for tests and logs). */
export interface DeadlineSchedulerStats {
  /** Claim transactions run. */
  claims: number
  /** Deadlines fired (orders cancelled). */
  fired: number
}

/** The order service's deadline scheduler (see `createDeadlineScheduler`). */
export interface DeadlineScheduler {
  /** Starts: a claim at once (resuming the deadlines that passed while no instance ran), then by the timer. */
  start(): void
  /** Stops the timer and waits for a claim in progress. */
  stop(): Promise<void>
  /** A new order committed with a deadline `inMs` from now: wake then, if that is earlier than the timer. */
  noteDeadline(inMs: number): void
  stats(): DeadlineSchedulerStats
}

/**
 * Fires due order deadlines. One timer, armed for the earliest deadline of a PENDING order (read from
 * the partial index after each claim), re-armed earlier when this instance creates an order due
 * sooner (`noteDeadline`), and never longer than `maxSleepMs`, so an order created by another
 * instance is fired at most that late. Due orders are claimed in bounded batches with
 * `FOR NO KEY UPDATE SKIP LOCKED` (`claimDueDeadlines`), so any number of instances fire each
 * deadline once; an instance that finds the due orders locked by another sleeps `retryMs` instead
 * of spinning. The database's clock decides what is due. Errors (database down) are logged and
 * retried with back-off; they never escape.
 */
export function createDeadlineScheduler(options: DeadlineSchedulerOptions): DeadlineScheduler {
  const { database, logger } = options
  const metrics = options.metrics ?? noMetrics
  const batchSize = options.batchSize ?? 100
  const maxSleepMs = options.maxSleepMs ?? 30_000
  const retryMs = options.retryMs ?? 1_000
  const stats: DeadlineSchedulerStats = { claims: 0, fired: 0 }
  let timer: NodeJS.Timeout | undefined
  let wakeAt = Number.POSITIVE_INFINITY
  let running: Promise<void> | undefined
  let wokenWhileRunning = false
  let stopped = true
  let failures = 0

  function arm(inMs: number): void {
    if (stopped) return
    const delay = Math.min(Math.max(0, Math.ceil(inMs)), maxSleepMs)
    const at = performance.now() + delay
    if (timer !== undefined && wakeAt <= at) return
    clearTimeout(timer)
    wakeAt = at
    timer = setTimeout(wake, delay)
    timer.unref()
  }

  function wake(): void {
    timer = undefined
    wakeAt = Number.POSITIVE_INFINITY
    if (running) {
      wokenWhileRunning = true
      return
    }
    running = fire().finally(() => {
      running = undefined
      if (wokenWhileRunning) {
        wokenWhileRunning = false
        arm(0)
      }
    })
  }

  /** Claims until a batch is not full, then arms the timer for the next deadline. */
  async function fire(): Promise<void> {
    try {
      for (;;) {
        stats.claims++
        const result = await database.transaction((tx) => claimDueDeadlines(tx, batchSize))
        failures = 0
        stats.fired += result.cancelled.length
        reportFired(result.cancelled, metrics, logger)
        if (stopped) return
        if (result.cancelled.length === batchSize) continue
        arm(sleepAfter(result, { maxSleepMs, retryMs }))
        return
      }
    } catch (error) {
      failures++
      const backoff = Math.min(retryMs * 2 ** (failures - 1), maxSleepMs)
      logger.warn({ err: error, retryInMs: backoff }, 'deadline claim failed; retrying')
      arm(backoff)
    }
  }

  return {
    start() {
      if (!stopped) return
      stopped = false
      arm(0)
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      timer = undefined
      wakeAt = Number.POSITIVE_INFINITY
      await running
    },
    noteDeadline: (inMs) => arm(inMs),
    stats: () => ({ ...stats }),
  }
}

/** Counts and logs the orders one claim cancelled by their deadline. */
function reportFired(cancelled: readonly Announced[], metrics: OrderMetrics, logger: Logger): void {
  if (cancelled.length === 0) return
  metrics.deadlinesFired(cancelled.length)
  for (const { event, ageSeconds } of cancelled) {
    metrics.cancelled(event.reason, event.failedStep, ageSeconds)
    logger.info(
      { orderId: event.orderId, correlationId: event.orderId, failedStep: event.failedStep },
      'order deadline passed; order cancelled',
    )
  }
}

/**
 * How long to sleep after a claim that was not full, ms: until the next deadline, `maxSleepMs` when
 * there is none, and `retryMs` when one is still due: it is locked by someone else (another
 * instance, a reaction, a customer's cancel), so wait for them rather than spinning on it.
 */
function sleepAfter(
  result: ClaimResult,
  { maxSleepMs, retryMs }: { maxSleepMs: number; retryMs: number },
): number {
  if (result.nextInMs === undefined) return maxSleepMs
  return result.nextInMs === 0 ? retryMs : result.nextInMs
}
