import { randomUUID } from 'node:crypto'
import { ShipmentCreated, ShipmentFailed, StockReserved } from '@saga/contracts'
import { enqueue, type HandlerDefinition, type Logger } from '@saga/messaging'
import { bookShipment } from '../domain/carrier.js'
import type { Tx } from '../plugins/db.js'
import { nextEvent } from './next-event.js'

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

/** What the reaction needs: the carrier account (`CARRIER_ACCOUNT`; empty = missing) and a logger. */
export interface CreateShipmentDeps {
  carrierAccount: string
  logger: Logger
}

/**
 * Step 4 of the saga: reserved stock is handed to the simulated carrier. Emits ShipmentCreated
 * (shipment id, carrier, tracking number) or, when the carrier refuses (unsupported country),
 * ShipmentFailed with the reason and the lines so inventory can release them. One shipment per
 * order: a second StockReserved for an order that already has one books nothing.
 *
 * @throws MissingSettingError while `carrierAccount` is empty (retried by the consumer)
 */
export function createShipmentWhenStockReserved(
  deps: CreateShipmentDeps,
): HandlerDefinition<Tx, StockReserved> {
  return {
    name: 'create-shipment-when-stock-reserved',
    message: StockReserved,
    async handle(message, tx) {
      const { orderId, lines, shippingAddress } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      if (deps.carrierAccount === '') throw new MissingSettingError('CARRIER_ACCOUNT')
      if ((await tx.shipment.count({ where: { orderId } })) > 0) {
        deps.logger.warn(log, 'order already has a shipment; nothing to do')
        return
      }
      const outcome = bookShipment({ orderId, address: shippingAddress }, deps.carrierAccount)
      const now = new Date()
      if (outcome.kind === 'refused') {
        await enqueue(
          tx,
          nextEvent(message, ShipmentFailed, orderId, {
            orderId,
            reason: outcome.reason,
            country: shippingAddress.country,
            lines,
            failedAt: now.toISOString(),
          }),
        )
        deps.logger.info({ ...log, reason: outcome.reason, country: shippingAddress.country }, outcome.detail)
        return
      }
      const shipment = await tx.shipment.create({
        data: {
          id: randomUUID(),
          orderId,
          carrier: outcome.carrier,
          carrierAccount: deps.carrierAccount,
          trackingNumber: outcome.trackingNumber,
          country: shippingAddress.country,
          address: shippingAddress,
          createdAt: now,
        },
      })
      await enqueue(
        tx,
        nextEvent(message, ShipmentCreated, orderId, {
          orderId,
          shipmentId: shipment.id,
          carrier: shipment.carrier,
          trackingNumber: shipment.trackingNumber,
          createdAt: now.toISOString(),
        }),
      )
      deps.logger.info(
        { ...log, shipmentId: shipment.id, trackingNumber: shipment.trackingNumber },
        'shipment created',
      )
    },
  }
}
