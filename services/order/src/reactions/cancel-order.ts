import { OrderCancelled, type FailedStep } from '@saga/contracts'
import {
  enqueue,
  nextEvent,
  type ConsumedMessage,
  type HandlerDefinition,
  type ReactionDeps,
} from '@saga/messaging'
import { decide } from '../domain/order.js'
import { recordTimeline } from '../orders/timeline.js'
import { lockOrder, saveTransition } from '../orders/transition.js'
import type { Tx } from '../orders/types.js'

/**
 * Records the failure in the order's timeline, cancels a PENDING order keeping the reason, and
 * emits OrderCancelled. A CANCELLED order stays as it is (redelivery, or two failures for one
 * order); a CONFIRMED order is never cancelled: that is logged as an error, since it means the
 * chain let a failure follow a success.
 */
export async function cancelOrder(
  deps: ReactionDeps,
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
  await saveTransition(tx, orderId, transition)
  const seen = { messageId: message.id, orderId, type: message.type, source: message.source }
  await recordTimeline(tx, { ...seen, occurredAt: message.time, data: message.payload })
  if (transition.kind === 'unchanged') {
    const { why } = transition
    if (why === 'confirmed-orders-are-never-cancelled') {
      deps.logger.error({ ...log, why }, 'confirmed order not cancelled')
    } else deps.logger.info({ ...log, why }, 'order already cancelled')
    return
  }
  const payload = {
    orderId,
    customerId: order.customerId,
    reason,
    failedStep,
    cancelledAt: now.toISOString(),
  }
  const next = nextEvent(message, OrderCancelled, orderId, payload, now)
  const id = await enqueue(tx, next)
  await recordTimeline(tx, {
    messageId: id,
    orderId,
    type: next.type,
    source: 'order',
    occurredAt: now,
    data: next.payload,
  })
  deps.logger.info(log, 'order cancelled')
}

/** A handler that cancels the order when `contract`'s failure arrives. */
export const cancelOrderWhen = <P extends { orderId: string; reason: string }>(
  name: string,
  contract: HandlerDefinition<Tx, P>['message'],
  failedStep: FailedStep,
  deps: ReactionDeps,
): HandlerDefinition<Tx, P> => ({
  name,
  message: contract,
  handle: (message, tx) => cancelOrder(deps, message, failedStep, tx),
})
