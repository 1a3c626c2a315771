/**
 * @saga/contracts: every event of the order saga with its versioned type, routing key and zod
 * schema, and the saga map (who reacts to which fact and may emit what). Depends on nothing but zod;
 * services import it, messaging never does.
 */
import { OrderCancelled, OrderConfirmed, OrderCreated, OrderCreatedV2 } from './order.js'
import { PaymentFailed, PaymentProcessed, PaymentRefunded } from './payment.js'
import { StockReleased, StockReservationFailed, StockReserved } from './inventory.js'
import { ShipmentCancelled, ShipmentCreated, ShipmentFailed } from './shipment.js'

export * from './define.js'
export * from './iso-codes.js'
export * from './values.js'
export * from './order.js'
export * from './payment.js'
export * from './inventory.js'
export * from './shipment.js'
export * from './saga-map.js'
export * from './order-api.js'
export { eventJsonSchema, eventJsonSchemaFiles } from './json-schema.js'

/** Every event of the chain, in chain order, each version of an event after the one before it. */
export const allEvents = [
  OrderCreated,
  OrderCreatedV2,
  PaymentProcessed,
  PaymentFailed,
  StockReserved,
  StockReservationFailed,
  ShipmentCreated,
  ShipmentFailed,
  PaymentRefunded,
  StockReleased,
  ShipmentCancelled,
  OrderConfirmed,
  OrderCancelled,
] as const

/** Any event contract of the chain. */
export type AnyEvent = (typeof allEvents)[number]
/** Any versioned type name of the chain, e.g. `order.created.v1`. */
export type EventType = AnyEvent['type']
export { asyncApiDocument, receiveOperationId, type AsyncApiOptions } from './asyncapi.js'
