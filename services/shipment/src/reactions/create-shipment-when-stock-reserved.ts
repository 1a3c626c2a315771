import { randomUUID } from 'node:crypto'
import { ShipmentCreated, ShipmentFailed, StockReserved } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import { bookShipment } from '../domain/carrier.js'
import type { Tx } from '../plugins/db.js'
import { cancellations, orderState, saveShipment } from '../store.js'

/**
 * Thrown while a setting the handler needs is missing. It is transient on purpose: the delivery is
 * rolled back and retried (not dead-lettered as poison), so once the operator supplies the setting
 * and restarts the service the order carries on.
 */
export class MissingSettingError extends Error {
  constructor(readonly setting: string) {
    super(
      `${setting} is not set: the carrier cannot be called until it is supplied and the service restarted`,
    )
    this.name = 'MissingSettingError'
  }
}

/**
 * Step 4 of the saga: reserved stock is handed to the simulated carrier. Emits ShipmentCreated
 * (shipment id, carrier, tracking number) or, when the carrier refuses (unsupported country),
 * ShipmentFailed with the reason and the lines so inventory can release them. One shipment per
 * order: a second StockReserved for an order that already has one books nothing. An order already
 * cancelled here (its OrderCancelled came first, e.g. its deadline fired while this service was
 * away) books nothing and emits nothing: no shipment, so nothing to cancel
 * (`cancellations.takeOrderLock` keeps a cancel handled at the same moment from slipping past).
 *
 * @param carrierAccount the carrier account (`CARRIER_ACCOUNT`); empty means missing
 * @throws MissingSettingError while `carrierAccount` is empty (retried by the consumer)
 */
export function createShipmentWhenStockReserved(
  deps: ReactionDeps,
  carrierAccount: string,
): HandlerDefinition<Tx, StockReserved> {
  return {
    name: 'create-shipment-when-stock-reserved',
    message: StockReserved,
    async handle(message, tx) {
      const { orderId, lines, shippingAddress } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      await cancellations.takeOrderLock(tx, orderId)
      const known = await orderState(tx, orderId)
      // Before the setting check: a cancelled order needs no carrier, so it is settled even while
      // CARRIER_ACCOUNT is missing.
      if (known.cancelled) {
        deps.logger.info(log, 'order already cancelled; no shipment booked')
        return
      }
      if (carrierAccount === '') throw new MissingSettingError('CARRIER_ACCOUNT')
      if (known.handled) {
        deps.logger.warn(log, 'order already has a shipment; nothing to do')
        return
      }
      const outcome = bookShipment({ orderId, address: shippingAddress }, carrierAccount)
      const now = deps.clock()
      if (outcome.kind === 'refused') {
        const { country } = shippingAddress
        const payload = { orderId, reason: outcome.reason, country, lines, failedAt: now.toISOString() }
        await enqueue(
          tx,
          nextEvent(ShipmentFailed, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
        )
        deps.logger.info({ ...log, reason: outcome.reason, country }, outcome.detail)
        return
      }
      const { carrier, trackingNumber } = outcome
      const shipmentId = randomUUID()
      await saveShipment(tx, {
        id: shipmentId,
        orderId,
        carrier,
        carrierAccount,
        trackingNumber,
        address: shippingAddress,
        createdAt: now,
      })
      const payload = { orderId, shipmentId, carrier, trackingNumber, createdAt: now.toISOString() }
      await enqueue(
        tx,
        nextEvent(ShipmentCreated, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
      )
      deps.logger.debug({ ...log, shipmentId, trackingNumber }, 'shipment created')
    },
  }
}
