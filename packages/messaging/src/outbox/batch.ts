import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import { toPublishable, type OutboxRow, type Publishable } from './envelope.js'
import { publishBatch, type BatchOutcome, type PublishFailure } from './publisher.js'
import { beginAndClaim, markFailed, markPublished, type FailedResult } from './rows.js'
import { COMMIT, ROLLBACK } from '../sql.js'
import { endProducerSpan, startProducerSpan, type ProducerTrace } from '../tracing.js'

/** What one batch needs; see `RelayOptions` for the meaning and units of each setting. */
export interface BatchSettings {
  exchange: string
  source: string
  batchSize: number
  publishTimeoutMs: number
  maxAttempts: number
  backoffBaseMs: number
  backoffMaxMs: number
  /** The broker's address, for the producer spans' `server.address` and `server.port`. */
  broker?: { address: string; port: number } | undefined
}

/** Outcome of one claim-publish-mark round, known after its transaction committed. */
export interface BatchResult {
  claimed: number
  published: OutboxRow[]
  failed: (FailedResult & { error: string; kind: PublishFailure['kind'] })[]
  channelBroken: boolean
  /** Rows to publish one at a time next: the broker refused one of them without naming it. */
  suspects: readonly string[]
  /**
   * From the claim (the batch is serialised and published right after it) to the last confirm, ms
   * (monotonic clock); 0 when nothing was published.
   */
  confirmMs: number
}

/**
 * Server-side guard beyond the publish timeout, freeing the locks of a relay that froze. With a 1 s
 * margin a starved 2-core machine (e2e under load) had healthy relays cut off between the confirms
 * and the marks, and their confirmed rows published a second time.
 */
const GUARD_MARGIN_MS = 5_000

/**
 * The row as it is published inside its producer span: a child of the context stored in the row,
 * whose own context replaces the row's traceparent on the wire so the consumer's span is its child.
 * Without an SDK the carrier is empty and the row is published as stored.
 */
function traced(row: OutboxRow, settings: BatchSettings, spans: Map<string, ProducerTrace>): OutboxRow {
  const producer = startProducerSpan(row, settings.exchange, settings.broker)
  spans.set(row.id, producer)
  if (!producer.carrier.traceparent) return row
  return { ...row, headers: { ...row.headers, ...producer.carrier } }
}

/**
 * A batch that is claimed and handed to the channel, its transaction still open and its confirms
 * (awaited for at most the publish timeout from the moment it was published) still to come.
 */
export interface PublishedBatch {
  /** Rows claimed (0: nothing was due; the transaction is already committed). */
  claimed: number
  /**
   * Awaits the confirms, marks the confirmed rows published and the others failed, and COMMITs.
   * Call exactly once. @throws database errors (update, commit); the transaction is then rolled
   * back and the rows stay pending, whether or not the broker got them (at least once).
   */
  finish(): Promise<BatchResult>
}

const NOTHING_DUE: BatchResult = {
  claimed: 0,
  published: [],
  failed: [],
  channelBroken: false,
  suspects: [],
  confirmMs: 0,
}

/**
 * Publishes `rows` (`publishBatch`) each inside its producer span, which ends with the row's
 * confirm or failure; a row that cannot be serialised is not sent and fails as poison. `failed`
 * holds every failure. The messages go out at the call (before its first await); only the
 * confirms are awaited.
 */
export async function publishRows(
  channel: ConfirmChannel,
  rows: readonly OutboxRow[],
  settings: BatchSettings,
  alone = false,
): Promise<BatchOutcome> {
  const spans = new Map<string, ProducerTrace>()
  const batch: { id: string; message: Publishable }[] = []
  const failed: PublishFailure[] = []
  for (const row of rows) {
    try {
      batch.push({ id: row.id, message: toPublishable(traced(row, settings, spans), settings.source) })
    } catch (error) {
      failed.push({ id: row.id, error: `cannot serialise: ${(error as Error).message}`, kind: 'poison' })
    }
  }
  const outcome = await publishBatch(channel, settings.exchange, batch, settings.publishTimeoutMs, alone)
  failed.push(...outcome.failed)
  const failures = new Map(failed.map((failure) => [failure.id, failure]))
  for (const [id, { span }] of spans) endProducerSpan(span, failures.get(id))
  return { ...outcome, failed }
}

/**
 * The first half of one round, in one database transaction: claim a batch (`beginAndClaim`) and
 * publish it without waiting for the confirms; `finish()` does the rest while the publish loop
 * claims the next. `rejectedDelayMs`: how long nacked rows wait before they are due again. `only`:
 * claim among these rows alone, published with nothing else in flight on `channel`, so that a
 * refusal the broker does not explain is this batch's.
 * @throws database errors (connect, claim); the transaction is then rolled back, nothing published.
 */
export async function claimAndPublish(
  pool: pg.Pool,
  channel: ConfirmChannel,
  settings: BatchSettings,
  rejectedDelayMs = 0,
  only?: readonly string[],
): Promise<PublishedBatch> {
  const client = await pool.connect()
  // A checked-out pg client that loses its connection emits 'error'; unhandled, it would crash the process.
  const onError = (): void => undefined
  client.on('error', onError)
  /** Back to the pool; with an error the client is destroyed (it may be dead or half-way). */
  const release = (error?: Error): void => {
    client.off('error', onError)
    client.release(error)
  }
  const fail = async (error: unknown): Promise<never> => {
    await client.query(ROLLBACK).catch(() => undefined)
    release(error as Error)
    throw error
  }
  let rows: OutboxRow[]
  try {
    const guardMs = Math.ceil(settings.publishTimeoutMs) + GUARD_MARGIN_MS
    rows = await beginAndClaim(client, only?.length ?? settings.batchSize, guardMs, only)
    if (rows.length === 0) {
      await client.query(COMMIT)
      release()
      return { claimed: 0, finish: () => Promise.resolve(NOTHING_DUE) }
    }
  } catch (error) {
    return fail(error)
  }
  const claimedAt = performance.now()
  // Published now (synchronously); only the confirms are awaited in finish().
  const confirming = publishRows(channel, rows, settings, only !== undefined)
  const finish = async (): Promise<BatchResult> => {
    try {
      const outcome = await confirming
      const confirmedAt = performance.now()
      const marked = await markOutcome(
        client,
        rows,
        outcome.failed,
        outcome.published,
        settings,
        rejectedDelayMs,
      )
      release()
      return {
        ...marked,
        channelBroken: outcome.channelBroken,
        suspects: outcome.suspects,
        confirmMs: confirmedAt - claimedAt,
      }
    } catch (error) {
      return fail(error)
    }
  }
  return { claimed: rows.length, finish }
}

/** Marks the confirmed rows published and the failed ones for retry or parking, and COMMITs. */
async function markOutcome(
  client: pg.PoolClient,
  rows: OutboxRow[],
  failures: PublishFailure[],
  publishedIds: string[],
  settings: BatchSettings,
  rejectedDelayMs: number,
): Promise<Omit<BatchResult, 'channelBroken' | 'suspects' | 'confirmMs'>> {
  const byId = new Map(rows.map((row) => [row.id, row]))
  const toMark = failures.map((failure) => {
    // Poison, unroutable and refused rows fail on their own: per-row backoff and an attempt each
    // (see `PublishFailure` for which park). Transport and rejected failures are the link's and the
    // queue's: no attempt, retried after the loop's own backoff.
    const own = failure.kind === 'poison' || failure.kind === 'unroutable' || failure.kind === 'refused'
    const attempts = byId.get(failure.id)?.attempts ?? 0
    return {
      id: failure.id,
      error: failure.error,
      delayMs: own
        ? backoffDelay(attempts, settings.backoffBaseMs, settings.backoffMaxMs)
        : failure.kind === 'rejected'
          ? rejectedDelayMs
          : 0,
      counts: own,
      parkable: failure.kind === 'poison',
      parkNow: failure.kind === 'refused',
    }
  })
  // Two round trips when every row went out (the usual case), three otherwise.
  const marked = await markFailed(client, toMark, settings.maxAttempts)
  await markPublished(client, publishedIds)
  const failureById = new Map(failures.map((failure) => [failure.id, failure]))
  return {
    claimed: rows.length,
    published: publishedIds.map((id) => byId.get(id)).filter((row): row is OutboxRow => row !== undefined),
    failed: marked.map((result) => {
      const failure = failureById.get(result.id)
      return { ...result, error: failure?.error ?? 'unknown', kind: failure?.kind ?? 'transport' }
    }),
  }
}
