import { OrderCancelled, type FailedStep } from '@saga/contracts'
import { enqueue, firstEvent, nextEvent, type ConsumedMessage } from '@saga/messaging'
import { cancelNote, decide } from '../domain/order.js'
import { recordTimeline } from './timeline.js'
import { lockOrder, saveTransition, type LockedOrder } from './transition.js'
import type { Transactor, Tx } from './types.js'

/** A cancellation `decide` allowed, for an order whose row the caller has locked. */
export interface Cancellation {
  reason: string
  failedStep?: FailedStep | undefined
  at: Date
}

/**
 * Turns the locked PENDING order CANCELLED and, in the same transaction, enqueues its OrderCancelled
 * and records it in the timeline with its cause as the note (`cancelNote`). `cause` is the message
 * that caused it (a step's failure: the event continues its correlation, causation and trace), or
 * absent for the customer's request and the deadline, which start a new causation chain.
 * Returns the OrderCancelled payload.
 * @throws Error when the order was no longer PENDING (see `saveTransition`)
 */
export async function cancelAndAnnounce(
  tx: Tx,
  order: Pick<LockedOrder, 'id' | 'customerId'>,
  cancellation: Cancellation,
  cause?: ConsumedMessage,
): Promise<OrderCancelled> {
  const { reason, failedStep, at } = cancellation
  await saveTransition(tx, order.id, { kind: 'cancelled', status: 'CANCELLED', reason, failedStep, at })
  const event = {
    aggregateId: order.id,
    payload: {
      orderId: order.id,
      customerId: order.customerId,
      reason,
      ...(failedStep === undefined ? {} : { failedStep }),
      cancelledAt: at.toISOString(),
    },
    occurredAt: at,
  }
  const next = cause ? nextEvent(OrderCancelled, { ...event, cause }) : firstEvent(OrderCancelled, event)
  const payload = next.payload
  const id = await enqueue(tx, next)
  await recordTimeline(tx, {
    messageId: id,
    orderId: order.id,
    type: next.type,
    source: 'order',
    occurredAt: at,
    data: payload,
    note: cancelNote(reason, failedStep),
  })
  return payload
}

/** What the customer's cancel did: cancelled the order, found it cancelled already, found it CONFIRMED, or found no order. */
export type CustomerCancelResult =
  | { kind: 'cancelled'; event: OrderCancelled }
  | { kind: 'already-cancelled' }
  | { kind: 'confirmed' }
  | { kind: 'unknown' }

/**
 * `POST /orders/:id/cancel`: under the order's row lock, a PENDING order becomes CANCELLED with
 * reason `customer_requested` (no failed step) and its OrderCancelled is enqueued in the same
 * transaction. A CANCELLED order is left as it is (idempotent: nothing is emitted again); a
 * CONFIRMED one is never cancelled. A confirm racing with it waits for the lock and then finds the
 * order CANCELLED (or the other way round), so exactly one of them changes it.
 */
export async function cancelByCustomer(
  transactor: Transactor,
  orderId: string,
  now: Date,
): Promise<CustomerCancelResult> {
  return transactor.transaction(async (tx): Promise<CustomerCancelResult> => {
    const order = await lockOrder(tx, orderId)
    if (!order) return { kind: 'unknown' }
    const transition = decide(order.status, { kind: 'cancel', reason: 'customer_requested' }, now)
    if (transition.kind === 'unchanged') {
      return transition.why === 'already-cancelled' ? { kind: 'already-cancelled' } : { kind: 'confirmed' }
    }
    const event = await cancelAndAnnounce(tx, order, { reason: transition.reason, at: now })
    return { kind: 'cancelled', event }
  })
}
