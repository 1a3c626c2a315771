import type { Prisma } from '../generated/prisma/client.js'
import type { Tx } from './types.js'

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
}

/**
 * Adds an event to its order's timeline, once: a message already recorded (redelivery, or this
 * service's own event) is left alone. Returns false, writing nothing, when the order is unknown
 * here (an event of another environment sharing the exchange), since a retry would not change that.
 */
export async function recordTimeline(tx: Tx, entry: TimelineEntry): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO order_events (message_id, order_id, type, source, occurred_at, recorded_at, data)
    SELECT ${entry.messageId}::uuid, o.id, ${entry.type}, ${entry.source}, ${entry.occurredAt},
           COALESCE(${entry.recordedAt ?? null}::timestamptz, now()), ${JSON.stringify(entry.data)}::jsonb
    FROM orders o WHERE o.id = ${entry.orderId}::uuid
    ON CONFLICT (message_id) DO NOTHING`
  if (inserted === 1) return true
  return (await tx.order.count({ where: { id: entry.orderId } })) === 1
}

/** Timeline rows as the API shows them, oldest first. */
export const timelineQuery = {
  orderBy: [{ occurredAt: 'asc' }, { recordedAt: 'asc' }],
  select: { messageId: true, type: true, source: true, occurredAt: true, recordedAt: true },
} satisfies Prisma.OrderEventFindManyArgs
