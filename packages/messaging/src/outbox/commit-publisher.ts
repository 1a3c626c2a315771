import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { ConfirmChannelSlot } from '../amqp/confirm-channel.js'
import type { AmqpConnection } from '../amqp/connection.js'
import type { CommittedRow } from '../database.js'
import { reportBackgroundFailure } from '../database-errors.js'
import type { Logger } from '../types.js'
import { publishRows, type BatchResult, type BatchSettings } from './batch.js'
import {
  expectResults,
  GIVE_BACK,
  MARK_HELD_RESULTS,
  markHeldPublished,
  type StatementResult,
} from '../sql.js'

/**
 * How much longer than the publish timeout a row handed over at commit is held from the sweep, ms:
 * the mark's wait (`MARK_EVERY_MS`) and round trip on a starved machine.
 */
export const COMMIT_HOLD_MARGIN_MS = 5_000
/**
 * A row whose `available_at` is more than this ahead is still held by its committer, ms: far less
 * than the margin, far more than a reset to `now()` (an operator's republish) can be.
 */
const STILL_HELD_MS = COMMIT_HOLD_MARGIN_MS / 5
/** Confirmed rows are marked at most this long after their confirm, ms, */
const MARK_EVERY_MS = 100
/** or at once when this many wait. */
const MARK_AT_MOST = 1_000

/** What the commit publisher needs; see `RelayOptions` for the settings' meaning and units. */
export interface CommitPublisherOptions {
  pool: pg.Pool
  /** The relay's broker connection; the publisher opens its own confirm channel on it. */
  connection: AmqpConnection
  settings: BatchSettings
  /** How far ahead a handed-over row's `available_at` is set, ms. */
  holdMs: number
  logger?: Logger | undefined
  /** Reports a settled round as the relay reports its batches (signals, counters). */
  report(result: BatchResult): void
  /** Wakes the relay's sweep for rows given back to it. */
  wakeRelay(): void
}

/**
 * Publish on commit: the rows a transaction of this process committed are published by it at once,
 * on a confirm channel of its own, with no claim or NOTIFY. Rows arriving during a round form the
 * next, so batches form under load without a timer; the confirmed rows of the last 100 ms are marked
 * in one round trip (`#flushMarks`). At least once: the rows were inserted `holdMs` ahead and the
 * relay sweeps what this process does not mark once the hold passed. A row not confirmed, and every
 * row while the link is down or blocked or after `stop()`, is given back (`available_at = now()`).
 */
export class CommitPublisher {
  readonly #options: CommitPublisherOptions
  #queue: CommittedRow[] = []
  #round: Promise<void> | undefined
  readonly #channel: ConfirmChannelSlot
  #stopped = false
  /** Confirmed rounds whose rows are not marked yet, and how many rows they hold. */
  #marks: BatchResult[] = []
  #marking = 0
  #markTimer: NodeJS.Timeout | undefined
  #flushing: Promise<void> = Promise.resolve()

  constructor(options: CommitPublisherOptions) {
    this.#options = options
    this.#channel = new ConfirmChannelSlot(options.connection, options.settings.publishTimeoutMs)
  }

  /** `CommittedRowSink.holdMs`: the hold while the link is up and unblocked and not stopped. */
  holdMs(): number | undefined {
    const { connection } = this.#options
    return !this.#stopped && connection.isConnected && connection.blocked === undefined
      ? this.#options.holdMs
      : undefined
  }

  /** `CommittedRowSink.publish`: queues the rows of a committed transaction for the next round. */
  publish(rows: CommittedRow[]): void {
    for (const row of rows) this.#queue.push(row)
    this.#kick()
  }

  /**
   * Starts draining unless a drain runs. Rows queued after a drain saw its queue empty, but before
   * it ended, start the next one, so no row waits for a later commit.
   */
  #kick(): void {
    if (this.#round) return
    this.#round = this.#drain().finally(() => {
      this.#round = undefined
      if (this.#queue.length > 0) this.#kick()
    })
  }

  /** Stops taking rows, waits for the round in flight, and gives back what was still queued. */
  async stop(): Promise<void> {
    this.#stopped = true
    await this.#round
    await this.#flushMarks()
    await this.#channel.close()
  }

  async #drain(): Promise<void> {
    const { batchSize } = this.#options.settings
    while (this.#queue.length > 0) {
      const rows = this.#queue.length <= batchSize ? this.#queue : this.#queue.slice(0, batchSize)
      this.#queue = this.#queue.length <= batchSize ? [] : this.#queue.slice(batchSize)
      if (this.#stopped || this.holdMs() === undefined) await this.#giveBack(rows.map((row) => row.id))
      else await this.#publishRound(rows)
    }
  }

  /** Publishes `rows`, awaits their confirms, gives back the others and queues the confirmed ones' mark. */
  async #publishRound(committed: CommittedRow[]): Promise<void> {
    const { settings } = this.#options
    let channel: ConfirmChannel
    try {
      channel = await this.#channel.get()
    } catch {
      await this.#giveBack(committed.map((row) => row.id))
      return
    }
    const startedAt = performance.now()
    // Each row as the relay would have claimed it, its age the time since its COMMIT.
    const rows = committed.map((row) => ({ ...row, payload: undefined, age_ms: startedAt - row.committedAt }))
    const outcome = await publishRows(channel, rows, settings)
    const confirmedAt = performance.now()
    if (outcome.channelBroken) this.#channel.discard(channel)
    const confirmed = new Set(outcome.published)
    if (outcome.failed.length > 0) await this.#giveBack(outcome.failed.map((failure) => failure.id))
    if (confirmed.size === 0) return
    this.#marks.push({
      claimed: rows.length,
      published: rows.filter((row) => confirmed.has(row.id)),
      failed: [],
      channelBroken: outcome.channelBroken,
      suspects: [],
      confirmMs: confirmedAt - startedAt,
    })
    this.#marking += confirmed.size
    if (this.#marking >= MARK_AT_MOST) void this.#flushMarks()
    else this.#markTimer ??= setTimeout(() => void this.#flushMarks(), MARK_EVERY_MS)
  }

  /**
   * Marks the confirmed rows of the rounds since the last flush in one round trip, then reports them;
   * the hold (ten seconds and more) keeps the sweep off them meanwhile. Only rows still held are
   * marked (`STILL_HELD_MS`): one made due meanwhile belongs to the relay. One flush at a time.
   */
  #flushMarks(): Promise<void> {
    clearTimeout(this.#markTimer)
    this.#markTimer = undefined
    const rounds = this.#marks
    this.#marks = []
    this.#marking = 0
    if (rounds.length === 0) return this.#flushing
    this.#flushing = this.#flushing.then(async () => {
      const ids = rounds.flatMap((round) => round.published.map((row) => row.id))
      try {
        const results = (await this.#options.pool.query(markHeldPublished(ids, STILL_HELD_MS))) as
          StatementResult | StatementResult[]
        expectResults(results, MARK_HELD_RESULTS, 'publish on commit mark')
      } catch (error) {
        this.#options.logger?.warn(
          { err: error, rows: ids.length },
          'published rows not marked; the relay publishes them again once their hold has passed',
        )
        return
      }
      for (const round of rounds) this.#options.report(round)
    })
    return this.#flushing
  }

  /** Makes `ids` due now, so the relay's sweep publishes them without waiting out the hold. */
  async #giveBack(ids: readonly string[]): Promise<void> {
    try {
      await this.#options.pool.query(GIVE_BACK, [ids])
      this.#options.wakeRelay()
    } catch (error) {
      reportBackgroundFailure(this.#options.logger, error, 'outbox give-back after publish on commit')
    }
  }
}
