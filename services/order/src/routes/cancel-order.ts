import type { CancelReason } from '@saga/contracts'
import type { Database } from '@saga/messaging'
import { decide } from '../domain/order.js'
import type { Tx } from '../plugins/db.js'
import { cancelAndAnnounce, type Announced } from '../reactions/cancel-order.js'
import { lockOrder } from '../store/orders.js'

/**
 * What the customer's cancel did: cancelled the order (its OrderCancelled, and the order's age then
 * in seconds, database clock), found it cancelled already, found it CONFIRMED, or found no order; in
 * a dry run, `would-cancel` for a PENDING order.
 */
export type CustomerCancelResult =
  | ({ kind: 'cancelled' } & Announced)
  | { kind: 'already-cancelled' }
  | { kind: 'confirmed' }
  | { kind: 'unknown' }
  | { kind: 'would-cancel' }

/**
 * `POST /orders/:id/cancel`: under the order's row lock, a PENDING order becomes CANCELLED at `now`
 * with reason `customer_requested` (`options.reason`: `operator_requested` for an operator's; no failed step) and its OrderCancelled is enqueued in the same
 * transaction (`database`: in the app `messaging`, whose transaction wakes the relay). A CANCELLED
 * order is left as it is (idempotent: nothing is emitted again); a CONFIRMED one is never cancelled.
 * A confirm racing with it waits for the lock and then finds the order CANCELLED (or the other way
 * round), so exactly one of them changes it.
 */
export async function cancelByCustomer(
  database: Database<Tx>,
  orderId: string,
  now: Date,
  options: CancelOptions = {},
): Promise<CustomerCancelResult> {
  return database.transaction(async (tx): Promise<CustomerCancelResult> => {
    const order = await lockOrder(tx, orderId)
    if (!order) return { kind: 'unknown' }
    const reason = options.reason ?? 'customer_requested'
    const transition = decide(order.status, { kind: 'cancel', reason }, now)
    if (transition.kind === 'unchanged') {
      return transition.why === 'already-cancelled' ? { kind: 'already-cancelled' } : { kind: 'confirmed' }
    }
    if (options.dryRun) return { kind: 'would-cancel' }
    const announced = await cancelAndAnnounce(tx, order, { reason: transition.reason, at: now })
    await options.alsoInTransaction?.(tx)
    return { kind: 'cancelled', ...announced }
  })
}

/** How `cancelByCustomer` runs for an operator (`POST /admin/orders/:id/cancel`). */
export interface CancelOptions {
  /** The reason recorded and announced; default `customer_requested`. */
  reason?: Extract<CancelReason, 'customer_requested' | 'operator_requested'> | undefined
  /** Decide under the lock, change nothing: a PENDING order answers `would-cancel`. */
  dryRun?: boolean | undefined
  /** Runs in the cancel's transaction after the order changed (the admin action's record). */
  alsoInTransaction?: ((tx: Tx) => Promise<unknown>) | undefined
}
