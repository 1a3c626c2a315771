import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import type { AmqpConnection } from '../amqp/connection.js'
import { withTimeout } from '../amqp/timeout.js'
import type { Logger } from '../types.js'
import { runBatch, type BatchResult, type BatchSettings } from './batch.js'
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
 * The relay's publish loop: claim, publish, confirm, mark, one batch at a time, until `running()`
 * turns false. Owns the publishing channel: opens one when there is none, drops it when a batch
 * says it is broken (closed, a confirm timed out, or the broker nacked on it), closes it on exit. Broker or database down: backs off (100 ms doubling to
 * 1 s) and tries again; never rejects for them.
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
  try {
    while (options.running()) {
      if (!connection.isConnected) {
        await connection.waitForConnection(options.pollIntervalMs).catch(() => undefined)
        continue
      }
      if (connection.blocked !== undefined) {
        // The broker holds every publish while it blocks the connection (a memory or disk alarm):
        // a batch would only time out. Wait for connection.unblocked, spending nothing.
        await connection.waitUntilUnblocked(options.pollIntervalMs)
        continue
      }
      let open: ConfirmChannel
      try {
        open = await openChannel()
      } catch (error) {
        log?.warn({ err: error }, 'outbox relay cannot open a channel; retrying')
        await waker.sleep(backoffDelay(transportFailures++, 100, 1_000))
        continue
      }
      let result: BatchResult
      try {
        result = await runBatch(
          options.pool,
          open,
          settings,
          backoffDelay(rejectedStreak, REJECTED_BASE_MS, REJECTED_MAX_MS),
        )
        databaseFailures = 0
      } catch (error) {
        const level = databaseFailures % 30 === 0 ? 'warn' : 'debug'
        log?.[level]({ err: error }, 'outbox relay database round failed; retrying')
        await waker.sleep(backoffDelay(databaseFailures++, 100, 1_000))
        continue
      }
      if (result.published.length + result.failed.length > 0) changedSinceIdle = true
      if (result.channelBroken) discardChannel()
      if (result.failed.some((failure) => failure.kind === 'rejected')) rejectedStreak += 1
      else if (result.published.length > 0) rejectedStreak = 0
      options.onBatch(result)
      if (result.failed.some((failure) => failure.kind === 'transport')) {
        await waker.sleep(backoffDelay(transportFailures++, 100, 1_000))
        continue
      }
      transportFailures = 0
      // A full batch means more may be due: drain before sleeping.
      if (result.claimed === settings.batchSize) continue
      options.onIdle?.(changedSinceIdle)
      changedSinceIdle = false
      await waker.sleep(options.pollIntervalMs)
    }
  } finally {
    discardChannel()
  }
}
