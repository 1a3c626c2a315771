import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import { ConfirmChannelSlot } from '../amqp/confirm-channel.js'
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
  /** Called before sleeping with nothing due; `changed`: rows were published or failed since the last call. */
  onIdle?(changed: boolean): void
  /** The loop runs while this returns true; a `waker.wake()` makes it look again at once. */
  running(): boolean
}

const REJECTED_BASE_MS = 250
const REJECTED_MAX_MS = 5_000

/** A settled batch: nothing failed, some rows failed on their own, or the database or the link failed. */
type Outcome = 'clean' | 'failed' | 'database' | 'transport'
const SEVERITY: Record<Outcome, number> = { clean: 0, failed: 1, database: 2, transport: 3 }

/** The more serious of two batch outcomes (a transport failure backs off the longest). */
function worst(a: Outcome, b: Outcome): Outcome {
  return SEVERITY[a] >= SEVERITY[b] ? a : b
}

/**
 * The relay's publish loop: claim, publish, confirm, mark, until `running()` turns false. Pipelined
 * two deep: while a full batch's confirms are in flight the next is claimed (SKIP LOCKED) and
 * published on the same channel, so the fsync-bound confirm wait overlaps the database round trips.
 * Owns the publishing channel. Broker or database down: backs off (100 ms doubling to 1 s); never
 * rejects for them.
 */
export async function runPublishLoop(options: PublishLoopOptions): Promise<void> {
  await new PublishLoop(options).run()
}

/** The loop's state: its channel, the batch in flight, and its failure streaks. */
class PublishLoop {
  readonly #options: PublishLoopOptions
  #declareExchange: boolean
  readonly #channel: ConfirmChannelSlot
  #transportFailures = 0
  #databaseFailures = 0
  // Batches in a row with rows the broker nacked: their rows wait 250 ms doubling to 5 s, so a
  // queue that stays full is not hammered, yet rows go out within seconds once it takes them.
  #rejectedStreak = 0
  #changedSinceIdle = false
  // Rows the broker refused one of without naming it: published alone, one at a time.
  readonly #suspects: string[] = []
  // The batch whose confirms are in flight while the next one is claimed, and its channel.
  #inFlight: { batch: PublishedBatch; on: ConfirmChannel; alone: boolean } | undefined

  constructor(options: PublishLoopOptions) {
    this.#options = options
    this.#declareExchange = options.declareExchange
    this.#channel = new ConfirmChannelSlot(options.connection, options.settings.publishTimeoutMs, (channel) =>
      this.#assertExchange(channel),
    )
  }

  async run(): Promise<void> {
    try {
      while (this.#options.running()) await this.#step()
    } finally {
      await this.#drainPipeline()
      this.#channel.discard()
    }
  }

  /** One turn: wait for the link, or claim and publish the next batch and settle what is due. */
  async #step(): Promise<void> {
    const { connection, waker, settings, pollIntervalMs } = this.#options
    if (!connection.isConnected) {
      await this.#drainPipeline()
      await connection.waitForConnection(pollIntervalMs).catch(() => undefined)
      return
    }
    if (connection.blocked !== undefined) {
      // The broker holds every publish while it blocks the connection (a memory or disk alarm):
      // a batch would only time out. Wait for connection.unblocked, spending nothing.
      await this.#drainPipeline()
      await connection.waitUntilUnblocked(pollIntervalMs)
      return
    }
    const next = await this.#claimNext()
    if (!next) return
    // The previous batch's confirms were in flight while `next` was claimed and published.
    let outcome = await this.#drainPipeline()
    this.#inFlight = next
    // A full, clean batch means more may be due: claim the next while this one confirms. A suspect
    // is published alone, so it is settled first.
    if (outcome === 'clean' && next.batch.claimed === settings.batchSize && !next.alone) return
    outcome = worst(outcome, await this.#drainPipeline())
    if (outcome === 'transport' || outcome === 'database') {
      const failures = outcome === 'transport' ? this.#transportFailures++ : this.#databaseFailures++
      await waker.sleep(backoffDelay(failures, 100, 1_000))
      return
    }
    // More due, or suspects to publish one by one: no idle sleep between them.
    if (next.batch.claimed === settings.batchSize || this.#suspects.length > 0) return
    this.#options.onIdle?.(this.#changedSinceIdle)
    this.#changedSinceIdle = false
    await waker.sleep(pollIntervalMs)
  }

  /** Opens a channel if needed, then claims and publishes a batch; undefined after a failure (backed off). */
  async #claimNext(): Promise<{ batch: PublishedBatch; on: ConfirmChannel; alone: boolean } | undefined> {
    const { waker, pool, settings, logger: log } = this.#options
    let open: ConfirmChannel
    try {
      open = await this.#channel.get()
    } catch (error) {
      await this.#drainPipeline()
      log?.warn({ reason: (error as Error).message }, 'outbox relay cannot open a channel; retrying')
      await waker.sleep(backoffDelay(this.#transportFailures++, 100, 1_000))
      return undefined
    }
    // The pipeline is empty whenever there are suspects: the batch that made them was settled.
    const suspect = this.#suspects.shift()
    const only = suspect === undefined ? undefined : [suspect]
    try {
      const rejectedDelay = backoffDelay(this.#rejectedStreak, REJECTED_BASE_MS, REJECTED_MAX_MS)
      return {
        batch: await claimAndPublish(pool, open, settings, rejectedDelay, only),
        on: open,
        alone: !!only,
      }
    } catch (error) {
      await this.#drainPipeline()
      this.#logDatabaseFailure(error)
      await waker.sleep(backoffDelay(this.#databaseFailures++, 100, 1_000))
      return undefined
    }
  }

  /** Declares the exchange on a new channel, unless a 406 said it is someone else's to declare. */
  async #assertExchange(channel: ConfirmChannel): Promise<void> {
    if (!this.#declareExchange) return
    const { exchange, publishTimeoutMs } = this.#options.settings
    try {
      await withTimeout(
        channel.assertExchange(exchange, 'topic', { durable: true }),
        publishTimeoutMs,
        'assert exchange',
      )
    } catch (error) {
      // 406: the exchange exists with other arguments; it is someone else's to declare then.
      if ((error as { code?: number }).code === 406) this.#declareExchange = false
      throw error
    }
  }

  #logDatabaseFailure(error: unknown): void {
    // The first failure of an outage at warn, the rest at debug: one line when it goes.
    const level = this.#databaseFailures === 0 ? 'warn' : 'debug'
    this.#options.logger?.[level]({ err: error }, 'outbox relay database round failed; retrying')
  }

  /** Awaits a batch's confirms and marks, reports it; 'clean' when nothing failed. */
  async #settle(batch: PublishedBatch, on: ConfirmChannel): Promise<Outcome> {
    let result: BatchResult
    try {
      result = await batch.finish()
      this.#databaseFailures = 0
    } catch (error) {
      this.#logDatabaseFailure(error)
      return 'database'
    }
    if (result.published.length + result.failed.length > 0) this.#changedSinceIdle = true
    for (const id of result.suspects) if (!this.#suspects.includes(id)) this.#suspects.push(id)
    // Only the batch's own channel: the loop may already publish on a fresh one.
    if (result.channelBroken) this.#channel.discard(on)
    if (result.failed.some((failure) => failure.kind === 'rejected')) this.#rejectedStreak += 1
    else if (result.published.length > 0) this.#rejectedStreak = 0
    this.#options.onBatch(result)
    if (result.failed.some((failure) => failure.kind === 'transport')) return 'transport'
    this.#transportFailures = 0
    return result.failed.length > 0 || result.channelBroken ? 'failed' : 'clean'
  }

  /** Settles the batch in flight, if any; its outcome, or 'clean' when there was none. */
  async #drainPipeline(): Promise<Outcome> {
    const pending = this.#inFlight
    this.#inFlight = undefined
    return pending ? this.#settle(pending.batch, pending.on) : 'clean'
  }
}
