import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import type { AmqpConnection } from '../amqp/connection.js'
import type { CommittedRow, CommittedRowSink } from '../database.js'
import { reportBackgroundFailure } from '../database-errors.js'
import type { ProducerTrace } from '../tracing.js'
import type { Logger } from '../types.js'
import { endSpans, toBatch, type BatchResult, type BatchSettings } from './batch.js'
import type { OutboxRow } from './envelope.js'
import { publishBatch } from './publisher.js'
import { uuidArrayLiteral } from './rows.js'

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
 * Publish on commit: the rows a transaction of this process committed are published by this
 * process at once, on a confirm channel of its own, and marked published in one round trip; the
 * relay's claim, and the NOTIFY that would wake it, are not needed for them. Rows that arrive while a
 * round is in flight form the next round, so batches form under load without a timer.
 *
 * At least once holds at every point: the rows were inserted `holdMs` ahead, so no sweep takes them
 * meanwhile, and the relay sweeps whatever this process does not mark. A crash after the COMMIT and
 * before the confirm leaves the rows to the sweep once the hold has passed; a crash after the
 * confirm and before the mark has them published again then (consumers dedupe on the message id).
 * A row the broker does not confirm (returned, nacked, timed out, a closed channel) is given back
 * at once (`available_at = now()`) and the relay retries it with its own rules (attempts, backoff,
 * parking); so is every row while the link is down or blocked, or after `stop()`.
 */
export class CommitPublisher implements CommittedRowSink {
  readonly #options: CommitPublisherOptions
  #queue: CommittedRow[] = []
  #round: Promise<void> | undefined
  #channel: ConfirmChannel | undefined
  #stopped = false

  constructor(options: CommitPublisherOptions) {
    this.#options = options
  }

  holdMs(): number | undefined {
    const { connection } = this.#options
    return !this.#stopped && connection.isConnected && connection.blocked === undefined
      ? this.#options.holdMs
      : undefined
  }

  publish(rows: CommittedRow[]): void {
    for (const row of rows) this.#queue.push(row)
    this.#round ??= this.#drain().finally(() => (this.#round = undefined))
  }

  wake(): void {
    this.#options.wakeRelay()
  }

  /** Stops taking rows, waits for the round in flight, and gives back what was still queued. */
  async stop(): Promise<void> {
    this.#stopped = true
    await this.#round
    const channel = this.#channel
    this.#channel = undefined
    await channel?.close().catch(() => undefined)
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

  /** Publishes `rows`, awaits their confirms, marks the confirmed ones and gives back the others. */
  async #publishRound(committed: CommittedRow[]): Promise<void> {
    const { settings } = this.#options
    let channel: ConfirmChannel
    try {
      channel = await this.#openChannel()
    } catch {
      await this.#giveBack(committed.map((row) => row.id))
      return
    }
    const startedAt = performance.now()
    const rows = committed.map((row) => asOutboxRow(row, startedAt))
    const spans = new Map<string, ProducerTrace>()
    const { batch, failures } = toBatch(rows, settings, spans)
    const outcome = await publishBatch(channel, settings.exchange, batch, settings.publishTimeoutMs)
    const confirmedAt = performance.now()
    failures.push(...outcome.failed)
    endSpans(spans, failures)
    if (outcome.channelBroken && this.#channel === channel) this.#discardChannel()
    const confirmed = new Set(outcome.published)
    try {
      await this.#mark(
        outcome.published,
        failures.map((failure) => failure.id),
      )
    } catch (error) {
      this.#options.logger?.warn(
        { err: error, rows: outcome.published.length },
        'published rows not marked; the relay publishes them again once their hold has passed',
      )
      return
    }
    if (failures.length > 0) this.#options.wakeRelay()
    this.#options.report({
      claimed: rows.length,
      published: rows.filter((row) => confirmed.has(row.id)),
      failed: [],
      channelBroken: outcome.channelBroken,
      sinceClaimMs: confirmedAt - startedAt,
      confirmMs: confirmedAt - startedAt,
    })
  }

  /**
   * One round trip: the confirmed rows marked published, the others made due now for the relay,
   * in one transaction that needs no WAL flush of its own (a mark lost in a database crash only
   * means the row is published again).
   */
  async #mark(published: readonly string[], failed: readonly string[]): Promise<void> {
    const statements = ['BEGIN', 'SET LOCAL synchronous_commit = off']
    if (published.length > 0)
      statements.push(
        `UPDATE outbox_message SET published_at = now() WHERE id = ANY(${idArray(published)}) AND published_at IS NULL`,
      )
    if (failed.length > 0) statements.push(giveBackSql(failed))
    statements.push('COMMIT')
    await this.#options.pool.query(statements.join(';\n'))
  }

  /** Makes `ids` due now, so the relay's sweep publishes them without waiting out the hold. */
  async #giveBack(ids: readonly string[]): Promise<void> {
    try {
      await this.#options.pool.query(giveBackSql(ids))
      this.#options.wakeRelay()
    } catch (error) {
      reportBackgroundFailure(this.#options.logger, error, 'outbox give-back after publish on commit')
    }
  }

  async #openChannel(): Promise<ConfirmChannel> {
    if (this.#channel) return this.#channel
    const opened = await this.#options.connection.openChannel(true, this.#options.settings.publishTimeoutMs)
    opened.on('close', () => {
      if (this.#channel === opened) this.#channel = undefined
    })
    this.#channel = opened
    return opened
  }

  #discardChannel(): void {
    const old = this.#channel
    this.#channel = undefined
    // Not awaited: on a silent broker close() would wait for a close-ok that never comes.
    old?.close().catch(() => undefined)
  }
}

/** The row as the relay would have claimed it; its age is the time since its COMMIT. */
function asOutboxRow(row: CommittedRow, now: number): OutboxRow {
  return {
    id: row.id,
    type: row.type,
    routing_key: row.routing_key,
    payload: undefined,
    payload_json: row.payload_json,
    headers: row.headers,
    aggregate_id: row.aggregate_id,
    occurred_at: row.occurred_at,
    attempts: row.attempts,
    age_ms: now - row.committedAt,
  }
}

/** `ids` as a uuid[] literal (`uuidArrayLiteral`); they are `enqueue`'s own. */
const idArray = (ids: readonly string[]): string => uuidArrayLiteral(ids, 'publish on commit')

const giveBackSql = (ids: readonly string[]): string =>
  `UPDATE outbox_message SET available_at = now() WHERE id = ANY(${idArray(ids)}) AND published_at IS NULL`
