import type { Queryable } from './actions.js'
import {
  INBOX_RECORDS,
  OUTBOX_SUMMARY,
  PARKED_OF,
  PARKED_RECORDS,
  RECORDS_FOUND,
  RECORDS_OF_AGGREGATE,
  RETRY_PARKED,
} from './sql.js'

/** Where an outbox row stands: waiting for the relay, on the broker, or given up on (parked). */
export type OutboxState = 'pending' | 'published' | 'parked'

/** One outbox row as the admin surface shows it; times are ISO 8601 (UTC, ms). */
export interface OutboxRecord {
  id: string
  type: string
  routingKey: string
  aggregateId: string | null
  /** From the row's headers (what the relay publishes as CloudEvents `correlationid`). */
  correlationId: string | null
  causationId: string | null
  /** The W3C trace id of the row's `traceparent` header (tracing on), else null: links the hop to its trace. */
  traceId: string | null
  state: OutboxState
  attempts: number
  lastError: string | null
  occurredAt: string
  publishedAt: string | null
  failedAt: string | null
  payload: unknown
  /**
   * The row's `headers` column as stored, the envelope attributes that have no column of their own
   * (`correlationId`, `causationId`, `traceparent`, `tracestate`, `occurredAt`, `dataschema`); `{}`
   * when it holds none.
   */
  headers: Record<string, string>
}

/** The outbox's counts now: `oldestPendingAgeMs` by the database's clock. */
export interface OutboxSummary {
  pending: number
  parked: number
  oldestPendingAt: string | null
  oldestPendingAgeMs: number | null
}

interface RecordRow {
  id: string
  type: string
  routing_key: string
  aggregate_id: string | null
  headers: {
    correlationId?: string
    causationId?: string
    traceparent?: string
    [name: string]: unknown
  } | null
  attempts: number
  last_error: string | null
  occurred_at: Date
  published_at: Date | null
  failed_at: Date | null
  payload: unknown
}

const iso = (at: Date | null): string | null => (at ? at.toISOString() : null)

// W3C Trace Context: `version-traceid-parentid-flags`, the trace id 32 lowercase hex digits, not all zero.
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/

/** The trace id of a `traceparent` header (https://www.w3.org/TR/trace-context/#traceparent-header), or null. */
function traceIdOf(traceparent: string | undefined): string | null {
  const id = traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1]
  return id === undefined || /^0+$/.test(id) ? null : id
}

function toRecord(row: RecordRow): OutboxRecord {
  return {
    id: row.id,
    type: row.type,
    routingKey: row.routing_key,
    aggregateId: row.aggregate_id,
    correlationId: row.headers?.correlationId ?? null,
    causationId: row.headers?.causationId ?? null,
    traceId: traceIdOf(row.headers?.traceparent),
    state: row.published_at ? 'published' : row.failed_at ? 'parked' : 'pending',
    attempts: row.attempts,
    lastError: row.last_error,
    occurredAt: row.occurred_at.toISOString(),
    publishedAt: iso(row.published_at),
    failedAt: iso(row.failed_at),
    payload: row.payload,
    headers: stringHeaders(row.headers),
  }
}

/** The string members of a row's `headers` (the column is JSON a producer wrote; others are dropped). */
function stringHeaders(headers: RecordRow['headers']): Record<string, string> {
  const strings: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {}))
    if (typeof value === 'string') strings[name] = value
  return strings
}

/** Rows of `outbox_message` (selected with the record columns) as records. */
export const toRecords = (rows: unknown[]): OutboxRecord[] => (rows as RecordRow[]).map(toRecord)

/**
 * The outbox's pending and parked counts and its oldest pending row, in one statement on the two
 * partial indexes (pending: `outbox_message_pending_idx`, parked: `outbox_message_parked_idx`).
 */
export async function outboxSummary(db: Queryable): Promise<OutboxSummary> {
  const { rows } = await db.query(OUTBOX_SUMMARY)
  const row = rows[0] as { pending: number; parked: number; oldest: Date | null; age_ms: number | null }
  return {
    pending: row.pending,
    parked: row.parked,
    oldestPendingAt: iso(row.oldest),
    oldestPendingAgeMs: row.age_ms === null ? null : Math.max(0, Math.round(row.age_ms)),
  }
}

/** Rows with `aggregate_id` = `aggregateId` (index `outbox_message_aggregate_id_idx`), by occurred_at, at most `limit`. */
export async function recordsOfAggregate(
  db: Queryable,
  aggregateId: string,
  limit: number,
): Promise<OutboxRecord[]> {
  const { rows } = await db.query(RECORDS_OF_AGGREGATE, [aggregateId, limit])
  return (rows as RecordRow[]).map(toRecord)
}

/** What `findRecords` looks for: one outbox row by its id (the message id), or the rows of one trace. */
export type RecordsSought = { messageId: string } | { traceId: string }

/**
 * The outbox row whose id is `sought.messageId`, or the rows whose `traceparent` carries
 * `sought.traceId` (32 lowercase hex digits), by occurred_at, at most `limit`.
 */
export async function findRecords(
  db: Queryable,
  sought: RecordsSought,
  limit: number,
): Promise<OutboxRecord[]> {
  const messageId = 'messageId' in sought ? sought.messageId : null
  const traceId = 'traceId' in sought ? sought.traceId.toLowerCase() : null
  const { rows } = await db.query(RECORDS_FOUND, [messageId, traceId, limit])
  return (rows as RecordRow[]).map(toRecord)
}

/** Parked rows, oldest parked first, at most `limit`; only those of `aggregateId` when given. */
export async function parkedRecords(
  db: Queryable,
  aggregateId: string | undefined,
  limit: number,
): Promise<OutboxRecord[]> {
  const { rows } = await db.query(PARKED_RECORDS, [aggregateId ?? null, limit])
  return (rows as RecordRow[]).map(toRecord)
}

/**
 * Of `ids` (outbox row UUIDs), the parked ones; with `retry`, makes them pending again first
 * (failed_at and last_error cleared, attempts 0, available now) and returns those it changed.
 * Run it in the transaction that records the action, so both or neither happen.
 */
export async function retryParkedRows(
  db: Queryable,
  ids: readonly string[],
  retry: boolean,
): Promise<string[]> {
  const { rows } = await db.query(retry ? RETRY_PARKED : PARKED_OF, [ids])
  return (rows as { id: string }[]).map((row) => row.id)
}

/** Which handler consumed which message, when (times ISO 8601). */
export interface InboxRecord {
  messageId: string
  handler: string
  receivedAt: string
}

/** The inbox rows of `messageIds` (UUIDs), by received_at: which of this service's handlers consumed them. */
export async function inboxRecords(db: Queryable, messageIds: readonly string[]): Promise<InboxRecord[]> {
  const { rows } = await db.query(INBOX_RECORDS, [messageIds])
  return (rows as { message_id: string; handler: string; received_at: Date }[]).map((row) => ({
    messageId: row.message_id,
    handler: row.handler,
    receivedAt: row.received_at.toISOString(),
  }))
}
