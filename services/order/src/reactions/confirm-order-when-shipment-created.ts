import { OrderConfirmed, ShipmentCreated } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition } from '@saga/messaging'
import { decide, lateNote } from '../domain/order.js'
import { noMetrics, type OrderReactionDeps } from '../metrics.js'
import type { Tx } from '../plugins/db.js'
import { lockOrder, saveTransition } from '../store/orders.js'
import { recordTimeline } from '../store/timeline.js'

/**
 * The last step succeeded: a PENDING order becomes CONFIRMED and OrderConfirmed is emitted, both
 * recorded in the order's timeline. A confirmed order stays as it is (redelivery). A cancelled one
 * is never confirmed: the ShipmentCreated is late (the deadline or the customer won the race
 * against the chain), so it is recorded with a `late: …` note and emits nothing; the shipment
 * service cancels that shipment when it sees the OrderCancelled.
 */
export function confirmOrderWhenShipmentCreated(
  deps: OrderReactionDeps,
): HandlerDefinition<Tx, ShipmentCreated> {
  return {
    name: 'confirm-order-when-shipment-created',
    message: ShipmentCreated,
    async handle(message, tx) {
      const { orderId, shipmentId } = message.payload
      const log = { orderId, shipmentId, messageId: message.id, correlationId: message.correlationId }
      const now = deps.clock()
      const order = await lockOrder(tx, orderId)
      if (!order) {
        deps.logger.warn(log, 'shipment created for an unknown order; ignored')
        return
      }
      const transition = decide(order.status, { kind: 'confirm', shipmentId }, now)
      const seen = { messageId: message.id, orderId, type: message.type, source: message.source }
      if (transition.kind === 'unchanged') {
        const note = lateNote(order.status)
        await recordTimeline(tx, { ...seen, occurredAt: message.time, data: message.payload, note })
        deps.logger.info({ ...log, why: transition.why }, 'order not confirmed')
        return
      }
      const { ageSeconds } = await saveTransition(tx, orderId, transition)
      await recordTimeline(tx, { ...seen, occurredAt: message.time, data: message.payload })
      const payload = {
        orderId,
        customerId: order.customerId,
        totalAmount: order.totalAmount,
        currency: order.currency,
        shipmentId,
        confirmedAt: now.toISOString(),
      }
      const next = nextEvent(OrderConfirmed, {
        cause: message,
        aggregateId: orderId,
        payload,
        occurredAt: now,
      })
      const id = await enqueue(tx, next)
      await recordTimeline(tx, {
        messageId: id,
        orderId,
        type: next.type,
        source: 'order',
        occurredAt: now,
        data: next.payload,
      })
      ;(deps.metrics ?? noMetrics).confirmed(ageSeconds)
      deps.logger.debug(log, 'order confirmed')
    },
  }
}
