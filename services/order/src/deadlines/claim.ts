import { PaymentProcessed, StockReserved, type OrderCancelled } from '@saga/contracts'
import { waitingStep } from '../domain/order.js'
import { cancelAndAnnounce } from '../orders/cancel.js'
import type { Tx } from '../orders/types.js'

/** What one claim did: the orders it cancelled, and when the next PENDING deadline is due. */
export interface ClaimResult {
  cancelled: OrderCancelled[]
  /** ms from now (database clock) to the earliest deadline of a PENDING order; 0 when one is due; undefined when none. */
  nextInMs: number | undefined
}

/**
 * In one transaction: claims up to `limit` PENDING orders whose deadline has passed by the
 * database's clock, oldest deadline first, with `FOR NO KEY UPDATE SKIP LOCKED` (the lock
 * `lockOrder` takes, so a reaction or a customer's cancel working on the order is skipped, and so
 * is a row another scheduler instance claimed: each deadline fires once), turns each CANCELLED with
 * reason `deadline_exceeded` and `failedStep` = the step it was waiting for by its timeline, and
 * enqueues its OrderCancelled. `cancelledAt` is the transaction's `now()`. Then reads when the
 * next deadline of a still PENDING order is due.
 */
export async function claimDueDeadlines(tx: Tx, limit: number): Promise<ClaimResult> {
  const { rows } = await tx.query<{
    id: string
    customer_id: string
    payment_processed: boolean
    stock_reserved: boolean
    now: Date
  }>({
    name: 'order.claim-due-deadlines',
    text: `WITH due AS (
        SELECT id, customer_id FROM orders
        WHERE status = 'PENDING' AND deadline_at <= now()
        ORDER BY deadline_at
        LIMIT $1
        FOR NO KEY UPDATE SKIP LOCKED
      )
      SELECT due.id::text, due.customer_id::text,
        EXISTS (SELECT 1 FROM order_events e WHERE e.order_id = due.id AND e.type = $2) AS payment_processed,
        EXISTS (SELECT 1 FROM order_events e WHERE e.order_id = due.id AND e.type = $3) AS stock_reserved,
        now() AS now
      FROM due`,
    values: [limit, PaymentProcessed.type, StockReserved.type],
  })
  const cancelled: OrderCancelled[] = []
  for (const row of rows) {
    const failedStep = waitingStep({
      paymentProcessed: row.payment_processed,
      stockReserved: row.stock_reserved,
    })
    cancelled.push(
      await cancelAndAnnounce(
        tx,
        { id: row.id, customerId: row.customer_id },
        { reason: 'deadline_exceeded', failedStep, at: row.now },
      ),
    )
  }
  return { cancelled, nextInMs: await nextDeadlineInMs(tx) }
}

/**
 * ms from the database's clock to the earliest deadline of a PENDING order (0 when one is already
 * due), or undefined when no PENDING order has a deadline. Reads the partial index's first entry.
 */
export async function nextDeadlineInMs(tx: Tx): Promise<number | undefined> {
  const { rows } = await tx.query<{ in_ms: number | null }>({
    name: 'order.next-deadline',
    text: `SELECT CEIL(EXTRACT(EPOCH FROM (min(deadline_at) - clock_timestamp())) * 1000)::float8 AS in_ms
      FROM orders WHERE status = 'PENDING' AND deadline_at IS NOT NULL`,
  })
  const inMs = rows[0]?.in_ms
  return inMs === null || inMs === undefined ? undefined : Math.max(0, inMs)
}
