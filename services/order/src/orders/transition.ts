import { Currency } from '@saga/contracts'
import type pg from 'pg'
import type { OrderStatus, Transition } from '../domain/order.js'
import type { Tx } from './types.js'

/** The facts of a locked order the reactions decide on and announce. */
export interface LockedOrder {
  id: string
  customerId: string
  status: OrderStatus
  currency: Currency
  /** Minor units of `currency`. */
  totalAmount: number
}

/**
 * Locks the order row for a status change; a concurrent reaction for the same order waits for the
 * lock and then sees the new status. `FOR NO KEY UPDATE` (what an UPDATE of non-key columns takes
 * anyway) rather than `FOR UPDATE`: it does not conflict with the key-share locks that timeline
 * inserts take through their foreign key, so recording an event never waits for, or deadlocks with,
 * a status change. Returns undefined when the order is unknown here.
 * @throws ZodError when the stored currency is not an ISO 4217 code (only a validated POST /orders writes it)
 */
export async function lockOrder(tx: Tx, orderId: string): Promise<LockedOrder | undefined> {
  const { rows } = await tx.query<{
    id: string
    customer_id: string
    status: OrderStatus
    currency: string
    total_amount: string
  }>({
    name: 'order.lock-order',
    text: `SELECT id::text, customer_id::text, status, currency, total_amount::text
      FROM orders WHERE id = $1::uuid FOR NO KEY UPDATE`,
    values: [orderId],
  })
  const row = rows[0]
  if (!row) return undefined
  return {
    id: row.id,
    customerId: row.customer_id,
    status: row.status,
    currency: Currency.parse(row.currency),
    totalAmount: Number(row.total_amount),
  }
}

/**
 * Writes what `decide` returned for the order (nothing when it is unchanged). Each UPDATE is guarded
 * by `status = 'PENDING'` as well as by the row lock the caller holds (`lockOrder`), so of a confirm
 * and a cancel racing for one order exactly one changes it.
 * @throws Error when a change was decided but the row was no longer PENDING (only possible when the
 *   caller did not lock it first); the transaction then rolls back and is retried
 */
export async function saveTransition(tx: Tx, orderId: string, transition: Transition): Promise<void> {
  let saved: pg.QueryResult<{ age_seconds: number }> | undefined
  if (transition.kind === 'confirmed') {
    saved = await tx.query({
      name: 'order.confirm',
      text: `UPDATE orders SET status = $2::"OrderStatus", confirmed_at = $3, updated_at = $3
        WHERE id = $1::uuid AND status = 'PENDING' RETURNING ${AGE_SECONDS}`,
      values: [orderId, transition.status, transition.at],
    })
  } else if (transition.kind === 'cancelled') {
    saved = await tx.query({
      name: 'order.cancel',
      text: `UPDATE orders SET status = $2::"OrderStatus", cancellation_reason = $3, failed_step = $4,
        cancelled_at = $5, updated_at = $5 WHERE id = $1::uuid AND status = 'PENDING' RETURNING ${AGE_SECONDS}`,
      values: [orderId, transition.status, transition.reason, transition.failedStep ?? null, transition.at],
    })
  }
  if (transition.kind === 'unchanged' || saved === undefined) return
  const seconds = saved.rows[0]?.age_seconds
  if (seconds === undefined)
    throw new Error(`order ${orderId} was not PENDING when it was to become ${transition.kind}`)
  for (const listener of finalStateListeners) listener({ status: transition.status, seconds })
}

/** An order that reached a final state: its status and its age then (seconds, database clock). */
export interface FinalState {
  status: 'CONFIRMED' | 'CANCELLED'
  /** From the order's created_at to the statement that made it final, both the database's clock. */
  seconds: number
}

// Both ends on the database's clock, so a skewed service clock cannot bend the figure.
const AGE_SECONDS = 'EXTRACT(EPOCH FROM clock_timestamp() - created_at)::float8 AS age_seconds'
const finalStateListeners = new Set<(state: FinalState) => void>()

/**
 * Calls `listener` whenever `saveTransition` makes an order CONFIRMED or CANCELLED: every final
 * transition goes through it, whichever reaction or route decided it. Called inside the transaction
 * that makes the change, so one rolled back after it (its enqueue or COMMIT failed, rare) is reported
 * again when retried. Returns the function that removes the listener.
 */
export function onFinalState(listener: (state: FinalState) => void): () => void {
  finalStateListeners.add(listener)
  return () => finalStateListeners.delete(listener)
}
