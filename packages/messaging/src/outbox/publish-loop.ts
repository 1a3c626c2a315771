import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import type { AmqpConnection } from '../amqp/connection.js'
import { withTimeout } from '../amqp/timeout.js'
import type { Logger } from '../types.js'
import { claimAndPublish, type BatchResult, type BatchSettings, type PublishedBatch } from './batch.js'
import type { Waker } from './wakeup.js'

/** What the publish loop needs; see `RelayOptions` for the meaning and units of each setting. */
export interface PublishLoopOptions {
  pool: pg.Pool
  connection: AmqpConnection
  settings: BatchSettings
  waker: Waker
  pollIntervalMs: number
  /** Declare the exchange on each new channel (turned off for good by a 406). */
  declareExchange: boolean
  logger?: Logger | undefined
  /** Called with every committed batch outcome (signals, counters, logs). */
  onBatch(result: BatchResult): void
  /**
   * Called when the loop is about to sleep with nothing due; `changed` is true when it published
   * or failed rows since the last call (the relay then re-reads its stats, so health does not
   * lag a drained outbox).
   */
  onIdle?(changed: boolean): void
  /** The loop runs while this returns true; a `waker.wake()` makes it look again at once. */
  running(): boolean
}

const REJECTED_BASE_MS = 250
const REJECTED_MAX_MS = 5_000

/**
 * The relay's publish loop: claim, publish, confirm, mark, until `running()` turns false.
 *
 * Pipelined two deep: while a full batch's confirms are in flight, the next batch is claimed (SKIP
 * LOCKED passes over the rows the first still locks) and published on the same channel, so the
 * broker's fsync-bound confirm wait overlaps the database round trips. At most two batches (2 ×
 * batchSize rows) are in memory and two transactions open, each bounded by the publish timeout
 * from its own publish. A batch that was not full, or that failed in any way, is settled before
 * the loop claims again, so backoffs and idle sleeps see a quiet pipeline.
 *
 * Owns the publishing channel: opens one when there is none, drops it when a batch says it is
 * broken (closed, a confirm timed out, or the broker nacked on it), closes it on exit. Broker or
 * database down: backs off (100 ms doubling to 1 s) and tries again; never rejects for them.
 */
export async function runPublishLoop(options: PublishLoopOptions): Promise<void> {
  const { connection, settings, waker, logger: log } = options
  let declareExchange = options.declareExchange
  let channel: ConfirmChannel | undefined

  const discardChannel = (): void => {
    const old = channel
    channel = undefined
    // Not awaited: on a silent broker close() would wait for a close-ok that never comes.
    old?.close().catch(() => undefined)
  }

  const openChannel = async (): Promise<ConfirmChannel> => {
    if (channel) return channel
    const opened = await connection.openChannel(true, settings.publishTimeoutMs)
    opened.on('close', () => {
      if (channel === opened) channel = undefined
    })
    if (declareExchange) {
      try {
        await withTimeout(
          opened.assertExchange(settings.exchange, 'topic', { durable: true }),
          settings.publishTimeoutMs,
          'assert exchange',
        )
      } catch (error) {
        opened.close().catch(() => undefined)
        // 406: the exchange exists with other arguments; it is someone else's to declare then.
        if ((error as { code?: number }).code === 406) declareExchange = false
        throw error
      }
    }
    channel = opened
    return opened
  }

  let transportFailures = 0
  let databaseFailures = 0
  // Batches in a row with rows the broker nacked: their rows wait 250 ms doubling to 5 s, so a
  // queue that stays full is not hammered, yet rows go out within seconds once it takes them.
  let rejectedStreak = 0
  let changedSinceIdle = false
  // The batch whose confirms are in flight while the next one is claimed, and its channel.
  let inFlight: { batch: PublishedBatch; on: ConfirmChannel } | undefined

  const logDatabaseFailure = (error: unknown): void => {
    const level = databaseFailures % 30 === 0 ? 'warn' : 'debug'
    log?.[level]({ err: error }, 'outbox relay database round failed; retrying')
  }

  /** Awaits a batch's confirms and marks, reports it; 'clean' when nothing failed. */
  const settle = async (batch: PublishedBatch, on: ConfirmChannel): Promise<Outcome> => {
    let result: BatchResult
    try {
      result = await batch.finish()
      databaseFailures = 0
    } catch (error) {
      logDatabaseFailure(error)
      return 'database'
    }
    if (result.published.length + result.failed.length > 0) changedSinceIdle = true
    // Only the batch's own channel: the loop may already publish on a fresh one.
    if (result.channelBroken && channel === on) discardChannel()
    if (result.failed.some((failure) => failure.kind === 'rejected')) rejectedStreak += 1
    else if (result.published.length > 0) rejectedStreak = 0
    options.onBatch(result)
    if (result.failed.some((failure) => failure.kind === 'transport')) return 'transport'
    transportFailures = 0
    return result.failed.length > 0 || result.channelBroken ? 'failed' : 'clean'
  }

  /** Settles the batch in flight, if any; its outcome, or 'clean' when there was none. */
  const drainPipeline = async (): Promise<Outcome> => {
    const pending = inFlight
    inFlight = undefined
    return pending ? settle(pending.batch, pending.on) : 'clean'
  }

  try {
    while (options.running()) {
      if (!connection.isConnected) {
        await drainPipeline()
        await connection.waitForConnection(options.pollIntervalMs).catch(() => undefined)
        continue
      }
      if (connection.blocked !== undefined) {
        // The broker holds every publish while it blocks the connection (a memory or disk alarm):
        // a batch would only time out. Wait for connection.unblocked, spending nothing.
        await drainPipeline()
        await connection.waitUntilUnblocked(options.pollIntervalMs)
        continue
      }
      let open: ConfirmChannel
      try {
        open = await openChannel()
      } catch (error) {
        await drainPipeline()
        log?.warn({ err: error }, 'outbox relay cannot open a channel; retrying')
        await waker.sleep(backoffDelay(transportFailures++, 100, 1_000))
        continue
      }
      let next: PublishedBatch
      try {
        next = await claimAndPublish(
          options.pool,
          open,
          settings,
          backoffDelay(rejectedStreak, REJECTED_BASE_MS, REJECTED_MAX_MS),
        )
      } catch (error) {
        await drainPipeline()
        logDatabaseFailure(error)
        await waker.sleep(backoffDelay(databaseFailures++, 100, 1_000))
        continue
      }
      // The previous batch's confirms were in flight while `next` was claimed and published.
      let outcome = await drainPipeline()
      inFlight = { batch: next, on: open }
      // A full, clean batch means more may be due: claim the next while this one confirms.
      if (outcome === 'clean' && next.claimed === settings.batchSize) continue
      outcome = worst(outcome, await drainPipeline())
      if (outcome === 'transport' || outcome === 'database') {
        const failures = outcome === 'transport' ? transportFailures++ : databaseFailures++
        await waker.sleep(backoffDelay(failures, 100, 1_000))
        continue
      }
      if (next.claimed === settings.batchSize) continue
      options.onIdle?.(changedSinceIdle)
      changedSinceIdle = false
      await waker.sleep(options.pollIntervalMs)
    }
  } finally {
    await drainPipeline()
    discardChannel()
  }
}

/** A settled batch: nothing failed, some rows failed on their own, or the database or the link failed. */
type Outcome = 'clean' | 'failed' | 'database' | 'transport'
const SEVERITY: Record<Outcome, number> = { clean: 0, failed: 1, database: 2, transport: 3 }

/** The more serious of two batch outcomes (a transport failure backs off the longest). */
function worst(a: Outcome, b: Outcome): Outcome {
  return SEVERITY[a] >= SEVERITY[b] ? a : b
}
