import { undoWhenOrderCancelled } from '@saga/cancellations'
import { ShipmentCancelled, type OrderCancelled } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { cancellations, cancelShipment } from '../store.js'

/**
 * The order was cancelled (a step failed, its deadline passed, or the customer asked): cancel its
 * CREATED shipment (status CANCELLED, with the order's reason) and emit ShipmentCancelled; with no
 * live shipment (none booked, refused by the carrier, cancelled already) emit nothing. Either way the
 * cancellation is recorded in the same transaction, under the order's lock (`undoWhenOrderCancelled`),
 * so a StockReserved that arrives later (or is being handled at this moment) books nothing.
 */
export function cancelShipmentWhenOrderCancelled(deps: ReactionDeps): HandlerDefinition<Tx, OrderCancelled> {
  return undoWhenOrderCancelled<Tx>(
    'cancel-shipment-when-order-cancelled',
    cancellations,
    deps,
    async (tx, message) => {
      const { orderId, reason } = message.payload
      const log = { orderId, reason, messageId: message.id, correlationId: message.correlationId }
      const now = deps.clock()
      const shipmentId = await cancelShipment(tx, orderId, reason, now)
      if (shipmentId === undefined) {
        deps.logger.info(log, 'no live shipment for the order; nothing to cancel')
        return
      }
      const payload = { orderId, shipmentId, reason, cancelledAt: now.toISOString() }
      await enqueue(
        tx,
        nextEvent(ShipmentCancelled, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
      )
      deps.logger.info({ ...log, shipmentId }, 'shipment cancelled')
    },
  )
}
