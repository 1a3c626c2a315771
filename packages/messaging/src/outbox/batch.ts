import type { ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import { toPublishable, type OutboxRow, type Publishable } from './envelope.js'
import { publishBatch, type PublishFailure } from './publisher.js'
import { beginAndClaim, markFailed, markPublished, type FailedResult } from './rows.js'
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
}

/** Outcome of one claim-publish-mark round, known after its transaction committed. */
export interface BatchResult {
  claimed: number
  published: OutboxRow[]
  failed: (FailedResult & { error: string; kind: PublishFailure['kind'] })[]
  channelBroken: boolean
  /** From the claim to the last confirm, ms (monotonic clock); 0 when nothing was published. */
  sinceClaimMs: number
  /** From the first publish to the last confirm, ms (monotonic clock). */
  confirmMs: number
}

/**
 * Server-side guard beyond the publish timeout. The client keeps its own bound (the publish
 * timeout); this one only frees the locks of a relay that froze. With a 1 s margin, a starved
 * 2-core machine (e2e under load) stalled healthy relays between the confirms and the marks long
 * enough to be cut off, and their confirmed rows were published a second time.
 */
const GUARD_MARGIN_MS = 5_000

/**
 * The row as it is published inside its producer span: a child of the context stored in the row,
 * whose own context replaces the row's traceparent on the wire so the consumer's span is its child.
 * Without an SDK the carrier is empty and the row is published as stored.
 */
function traced(row: OutboxRow, exchange: string, spans: Map<string, ProducerTrace>): OutboxRow {
  const headers = row.headers ?? {}
  const producer = startProducerSpan(headers, exchange, row.routing_key, row.id, headers.correlationId)
  spans.set(row.id, producer)
  if (!producer.carrier.traceparent) return row
  return { ...row, headers: { ...headers, ...producer.carrier } }
}

/** Ends every producer span of the batch: ERROR for the rows in `failures`, OK for the others. */
function endSpans(spans: Map<string, ProducerTrace>, failures: PublishFailure[]): void {
  const failed = new Map(failures.map((failure) => [failure.id, failure.error]))
  for (const [id, { span }] of spans) endProducerSpan(span, failed.get(id))
}

/**
 * One round, in one database transaction: claim a batch (FOR UPDATE SKIP LOCKED), publish it,
 * await the confirms, mark the confirmed rows published and the others failed, COMMIT.
 *
 * The transaction is bounded by the publish timeout on the server side too: a relay that freezes
 * (stopped process, stalled event loop) while holding row locks is cut off by
 * `idle_in_transaction_session_timeout`, so its rows go back to the other relays (design.md: "No
 * transaction stays open longer than the publish timeout").
 *
 * `rejectedDelayMs`: how long rows the broker nacked wait before they are due again.
 *
 * @throws database errors (connect, claim, update, commit); the transaction is then rolled back
 * and the rows stay pending, whether or not the broker got them (at least once).
 */
export async function runBatch(
  pool: pg.Pool,
  channel: ConfirmChannel,
  settings: BatchSettings,
  rejectedDelayMs = 0,
): Promise<BatchResult> {
  const client = await pool.connect()
  // A checked-out pg client that loses its connection emits 'error'; unhandled, it would crash the process.
  const onError = (): void => undefined
  client.on('error', onError)
  let failedClient: Error | undefined
  try {
    const rows = await beginAndClaim(
      client,
      settings.batchSize,
      Math.ceil(settings.publishTimeoutMs) + GUARD_MARGIN_MS,
    )
    const claimedAt = performance.now()
    if (rows.length === 0) {
      await client.query('COMMIT')
      return { claimed: 0, published: [], failed: [], channelBroken: false, sinceClaimMs: 0, confirmMs: 0 }
    }
    const batch: { id: string; message: Publishable }[] = []
    const failures: PublishFailure[] = []
    const spans = new Map<string, ProducerTrace>()
    for (const row of rows) {
      try {
        batch.push({
          id: row.id,
          message: toPublishable(traced(row, settings.exchange, spans), settings.source),
        })
      } catch (error) {
        failures.push({ id: row.id, error: `cannot serialise: ${(error as Error).message}`, kind: 'message' })
      }
    }
    const publishedAt = performance.now()
    const outcome =
      batch.length > 0
        ? await publishBatch(channel, settings.exchange, batch, settings.publishTimeoutMs)
        : undefined
    const confirmedAt = performance.now()
    failures.push(...(outcome?.failed ?? []))
    endSpans(spans, failures)
    const byId = new Map(rows.map((row) => [row.id, row]))
    const toMark = failures.map((failure) => ({
      id: failure.id,
      error: failure.error,
      // Only a message failure is the row's own: it backs off per row, counts an attempt and parks
      // after maxAttempts, so one poison row never blocks the rows behind it. A transport failure
      // is the link's (retried as soon as it works; the loop backs off itself), a rejection the
      // queue's (retried after the loop's short backoff): neither counts an attempt or parks.
      delayMs:
        failure.kind === 'message'
          ? backoffDelay(byId.get(failure.id)?.attempts ?? 0, settings.backoffBaseMs, settings.backoffMaxMs)
          : failure.kind === 'rejected'
            ? rejectedDelayMs
            : 0,
      parkable: failure.kind === 'message',
    }))
    const publishedIds = outcome?.published ?? []
    // Two round trips when every row went out (the usual case), three otherwise.
    const marked = await markFailed(client, toMark, settings.maxAttempts)
    await markPublished(client, publishedIds, true)
    const failureById = new Map(failures.map((failure) => [failure.id, failure]))
    return {
      claimed: rows.length,
      published: publishedIds.map((id) => byId.get(id)).filter((row): row is OutboxRow => row !== undefined),
      failed: marked.map((result) => {
        const failure = failureById.get(result.id)
        return { ...result, error: failure?.error ?? 'unknown', kind: failure?.kind ?? 'transport' }
      }),
      channelBroken: outcome?.channelBroken ?? false,
      sinceClaimMs: confirmedAt - claimedAt,
      confirmMs: confirmedAt - publishedAt,
    }
  } catch (error) {
    failedClient = error as Error
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.off('error', onError)
    // A client that failed mid-transaction may be dead or half-way: destroy it rather than reuse it.
    client.release(failedClient)
  }
}
