/**
 * The order timeline's SQL (order_events): an event recorded once per message id, in a handler's
 * transaction or many at a time for the batch recorder; and the shape the API reads it in.
 */
import type { Queryable } from '@saga/messaging/parts'
import type { Prisma } from '../generated/prisma/client.js'
import type { Tx } from '../plugins/db.js'

/** One entry of an order's timeline: an event of the saga seen for it. */
export interface TimelineEntry {
  /** The message id (outbox row id / CloudEvents id). */
  messageId: string
  orderId: string
  /** Versioned type, e.g. `payment.processed.v1`. */
  type: string
  /** Producing service, e.g. `payment`. */
  source: string
  /** When the fact happened. */
  occurredAt: Date
  /** When this service learned of it; default the transaction's time. Own events pass their own clock. */
  recordedAt?: Date | undefined
  data: unknown
  /** Why the entry matters beyond its type: who cancelled the order, or that a fact came late. */
  note?: string | undefined
}

/**
 * Adds an event to its order's timeline, once: a message already recorded (redelivery, or this
 * service's own event) is left alone. Returns false, writing nothing, when the order is unknown
 * here (an event of another environment sharing the exchange), since a retry would not change that.
 */
export async function recordTimeline(tx: Tx, entry: TimelineEntry): Promise<boolean> {
  const { rowCount } = await tx.query({
    name: 'order.record-timeline',
    text: `INSERT INTO order_events (message_id, order_id, type, source, occurred_at, recorded_at, data, note)
      SELECT $1::uuid, o.id, $3, $4, $5, COALESCE($6::timestamptz, now()), $7::jsonb, $8
      FROM orders o WHERE o.id = $2::uuid
      ON CONFLICT (message_id) DO NOTHING`,
    values: [
      entry.messageId,
      entry.orderId,
      entry.type,
      entry.source,
      entry.occurredAt,
      entry.recordedAt ?? null,
      JSON.stringify(entry.data),
      entry.note ?? null,
    ],
  })
  if (rowCount === 1) return true
  const known = await tx.query({
    name: 'order.order-exists',
    text: 'SELECT 1 FROM orders WHERE id = $1::uuid',
    values: [entry.orderId],
  })
  return known.rowCount === 1
}

/**
 * Adds many events to their orders' timelines in one statement (one round trip, autocommit, so the
 * whole batch or nothing), each once: a message already recorded is left alone. The entries travel
 * as one JSON document (`jsonb_to_recordset`), so the statement is the same for any batch size and
 * is prepared once per connection. The same statement answers which of the entries' orders are
 * unknown here (a redelivery or an own event already recorded is not that: its order exists), and
 * returns those entries, recorded nowhere.
 */
export async function recordTimelineBatch(
  db: Queryable,
  entries: ReadonlyArray<Omit<TimelineEntry, 'recordedAt'>>,
): Promise<Array<Omit<TimelineEntry, 'recordedAt'>>> {
  const batch = entries.map((e) => ({
    message_id: e.messageId,
    order_id: e.orderId,
    type: e.type,
    source: e.source,
    occurred_at: e.occurredAt.toISOString(),
    data: e.data,
  }))
  // A data-modifying CTE runs to completion whether or not the outer query reads it; the outer
  // query sees the orders table as it was before the INSERT, which the INSERT does not change.
  const { rows } = await db.query({
    name: 'order.record-timeline-batch',
    text: `WITH m AS (
        SELECT * FROM jsonb_to_recordset($1::jsonb)
          AS m(message_id uuid, order_id uuid, type text, source text, occurred_at timestamptz, data jsonb)
      ), recorded AS (
        INSERT INTO order_events (message_id, order_id, type, source, occurred_at, data)
        SELECT m.message_id, o.id, m.type, m.source, m.occurred_at, m.data
        FROM m JOIN orders o ON o.id = m.order_id
        ON CONFLICT (message_id) DO NOTHING
      )
      SELECT DISTINCT m.order_id::text AS order_id FROM m
      WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = m.order_id)`,
    values: [JSON.stringify(batch)],
  })
  if (rows.length === 0) return []
  const ids = new Set((rows as Array<{ order_id: string }>).map((row) => row.order_id))
  // PostgreSQL prints a uuid in lower case; a message may carry it in upper case.
  return entries.filter((e) => ids.has(e.orderId.toLowerCase()))
}

/** Timeline rows as the API shows them, oldest first. */
export const timelineQuery = {
  orderBy: [{ occurredAt: 'asc' }, { recordedAt: 'asc' }],
  select: { messageId: true, type: true, source: true, occurredAt: true, recordedAt: true, note: true },
} satisfies Prisma.OrderEventFindManyArgs
