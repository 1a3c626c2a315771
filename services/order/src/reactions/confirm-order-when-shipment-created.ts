import { OrderConfirmed, ShipmentCreated } from '@saga/contracts'
import { enqueue, type HandlerDefinition } from '@saga/messaging'
import { recordTimeline } from '../orders/timeline.js'
import { transitionOrder } from '../orders/transition.js'
import type { Tx } from '../orders/types.js'
import { clock, type ReactionDeps } from './deps.js'
import { followUp } from './follow-up.js'

/**
 * The last step succeeded: a PENDING order becomes CONFIRMED and OrderConfirmed is emitted, both
 * recorded in the order's timeline. A confirmed order stays as it is (redelivery); a cancelled one
 * is never confirmed (logged, since the chain should not allow it).
 */
export function confirmOrderWhenShipmentCreated(deps: ReactionDeps): HandlerDefinition<Tx, ShipmentCreated> {
  return {
    name: 'confirm-order-when-shipment-created',
    message: ShipmentCreated,
    async handle(message, tx) {
      const { orderId, shipmentId } = message.payload
      const log = { orderId, shipmentId, messageId: message.id, correlationId: message.correlationId }
      const now = clock(deps)
      const result = await transitionOrder(tx, orderId, { kind: 'confirm', shipmentId }, now)
      if (!result) {
        deps.logger.warn(log, 'shipment created for an unknown order; ignored')
        return
      }
      const seen = { messageId: message.id, orderId, type: message.type, source: message.source }
      await recordTimeline(tx, { ...seen, occurredAt: message.time, data: message.payload })
      if (result.transition.kind !== 'confirmed') {
        const why = result.transition.kind === 'unchanged' ? result.transition.why : result.transition.kind
        deps.logger.warn({ ...log, why }, 'order not confirmed')
        return
      }
      const { order } = result
      const payload = {
        orderId,
        customerId: order.customerId,
        totalAmount: order.totalAmount,
        currency: order.currency,
        shipmentId,
        confirmedAt: now.toISOString(),
      } as OrderConfirmed
      const next = followUp(message, OrderConfirmed, orderId, payload, now)
      const id = await enqueue(tx, next)
      await recordTimeline(tx, {
        messageId: id,
        orderId,
        type: next.type,
        source: 'order',
        occurredAt: now,
        data: next.payload,
      })
      deps.logger.info(log, 'order confirmed')
    },
  }
}
