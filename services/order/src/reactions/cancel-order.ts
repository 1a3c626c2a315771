import { OrderCancelled, type FailedStep } from '@saga/contracts'
import { enqueue, firstEvent, nextEvent, type ConsumedMessage, type HandlerDefinition } from '@saga/messaging'
import { cancelNote, decide, lateNote } from '../domain/order.js'
import { noMetrics, type OrderReactionDeps } from '../metrics.js'
import type { Tx } from '../plugins/db.js'
import { lockOrder, saveTransition, type LockedOrder } from '../store/orders.js'
import { recordTimeline } from '../store/timeline.js'

/** A cancellation `decide` allowed, for an order whose row the caller has locked. */
export interface Cancellation {
  reason: string
  failedStep?: FailedStep | undefined
  at: Date
}

/** What `cancelAndAnnounce` did: the OrderCancelled it enqueued, and the order's age then (seconds, database clock). */
export interface Announced {
  event: OrderCancelled
  ageSeconds: number
}

/**
 * Turns the locked PENDING order CANCELLED and, in the same transaction, enqueues its OrderCancelled
 * and records it in the timeline with its cause as the note (`cancelNote`). `cause` is the message
 * that caused it (a step's failure: the event continues its correlation, causation and trace), or
 * absent for the customer's request and the deadline, which start a new causation chain
 * (`firstEvent`). Every cancellation goes through here: a step's failure, the customer, the deadline.
 * @throws Error when the order was no longer PENDING (see `saveTransition`)
 */
export async function cancelAndAnnounce(
  tx: Tx,
  order: Pick<LockedOrder, 'id' | 'customerId'>,
  cancellation: Cancellation,
  cause?: ConsumedMessage,
): Promise<Announced> {
  const { reason, failedStep, at } = cancellation
  const final = await saveTransition(tx, order.id, {
    kind: 'cancelled',
    status: 'CANCELLED',
    reason,
    failedStep,
    at,
  })
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
  const id = await enqueue(tx, next)
  await recordTimeline(tx, {
    messageId: id,
    orderId: order.id,
    type: next.type,
    source: 'order',
    occurredAt: at,
    data: next.payload,
    note: cancelNote(reason, failedStep),
  })
  return { event: next.payload, ageSeconds: final.ageSeconds }
}

/**
 * Records the failure in the order's timeline, cancels a PENDING order keeping the reason, and
 * emits OrderCancelled. A failure that reaches an order already terminal is late: it is recorded
 * with a `late: …` note and changes nothing. A CANCELLED order stays as it is (its deadline or its
 * customer cancelled it while the step was in flight, or two failures for one order); a CONFIRMED
 * order is never cancelled: that is logged as an error, since it means the chain let a failure
 * follow a success.
 */
export async function cancelOrder(
  deps: OrderReactionDeps,
  message: ConsumedMessage<{ orderId: string; reason: string }>,
  failedStep: FailedStep,
  tx: Tx,
): Promise<void> {
  const { orderId, reason } = message.payload
  const log = { orderId, reason, failedStep, messageId: message.id, correlationId: message.correlationId }
  const now = deps.clock()
  const order = await lockOrder(tx, orderId)
  if (!order) {
    deps.logger.warn(log, 'failure for an unknown order; ignored')
    return
  }
  const transition = decide(order.status, { kind: 'cancel', reason, failedStep }, now)
  const seen = { messageId: message.id, orderId, type: message.type, source: message.source }
  if (transition.kind === 'unchanged') {
    await recordTimeline(tx, {
      ...seen,
      occurredAt: message.time,
      data: message.payload,
      note: lateNote(order.status),
    })
    const { why } = transition
    if (why === 'confirmed-orders-are-never-cancelled') {
      deps.logger.error({ ...log, why }, 'confirmed order not cancelled')
    } else deps.logger.info({ ...log, why }, 'late failure for a cancelled order; nothing to do')
    return
  }
  await recordTimeline(tx, { ...seen, occurredAt: message.time, data: message.payload })
  const { ageSeconds } = await cancelAndAnnounce(tx, order, { reason, failedStep, at: now }, message)
  ;(deps.metrics ?? noMetrics).cancelled(reason, failedStep, ageSeconds)
  deps.logger.info(log, 'order cancelled')
}

/** A handler that cancels the order when `contract`'s failure arrives. */
export const cancelOrderWhen = <P extends { orderId: string; reason: string }>(
  name: string,
  contract: HandlerDefinition<Tx, P>['message'],
  failedStep: FailedStep,
  deps: OrderReactionDeps,
): HandlerDefinition<Tx, P> => ({
  name,
  message: contract,
  handle: (message, tx) => cancelOrder(deps, message, failedStep, tx),
})
