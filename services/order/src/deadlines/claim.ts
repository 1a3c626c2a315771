import { waitingStep } from '../domain/order.js'
import type { Tx } from '../plugins/db.js'
import { cancelAndAnnounce, type Announced } from '../reactions/cancel-order.js'
import { claimDueOrders, nextDeadlineInMs } from '../store/orders.js'

/** What one claim did: the orders it cancelled, and when the next PENDING deadline is due. */
export interface ClaimResult {
  /** Each cancelled order's OrderCancelled, with the order's age then (seconds, database clock). */
  cancelled: Announced[]
  /** ms from now (database clock) to the earliest deadline of a PENDING order; 0 when one is due; undefined when none. */
  nextInMs: number | undefined
}

/**
 * In one transaction: claims up to `limit` PENDING orders whose deadline has passed by the
 * database's clock (`claimDueOrders`: skips rows someone else holds, so each deadline fires once),
 * turns each CANCELLED with reason `deadline_exceeded` and `failedStep` = the step it was waiting
 * for by its timeline, and enqueues its OrderCancelled. `cancelledAt` is the transaction's `now()`.
 * Then reads when the next deadline of a still PENDING order is due.
 */
export async function claimDueDeadlines(tx: Tx, limit: number): Promise<ClaimResult> {
  const cancelled: Announced[] = []
  for (const due of await claimDueOrders(tx, limit)) {
    const failedStep = waitingStep(due)
    cancelled.push(await cancelAndAnnounce(tx, due, { reason: 'deadline_exceeded', failedStep, at: due.now }))
  }
  return { cancelled, nextInMs: await nextDeadlineInMs(tx) }
}
