import type { FailedStep } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition, ReactionDeps } from '@saga/messaging'
import { decide, lateNote } from '../domain/order.js'
import { noMetrics, type OrderMetrics } from '../metrics.js'
import { cancelAndAnnounce } from '../orders/cancel.js'
import { recordTimeline } from '../orders/timeline.js'
import { lockOrder } from '../orders/transition.js'
import type { Tx } from '../orders/types.js'

/** What the order's reactions need: messaging's deps plus the service's counters (default none). */
export type OrderReactionDeps = ReactionDeps & { metrics?: OrderMetrics | undefined }

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
  await cancelAndAnnounce(tx, order, { reason, failedStep, at: now }, message)
  ;(deps.metrics ?? noMetrics).cancelled(reason, failedStep)
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
