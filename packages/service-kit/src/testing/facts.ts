// The saga's failure and cancel facts as a consuming service receives them in its tests
// (messaging's `consumed`: a fresh message id, the order id as correlation id, the producing service
// as source), with a fresh customer id where the fact carries one. `at` defaults to now.
import { randomUUID } from 'node:crypto'
import {
  OrderCancelled,
  ShipmentFailed,
  StockReservationFailed,
  type OrderCreated,
  type ServiceName,
} from '@saga/contracts'
import type { ConsumedMessage, MessageContract } from '@saga/messaging'
import { consumed, outboxOf, type OutboxRowOf } from '@saga/messaging/testing'
import type pg from 'pg'

/** `payload` of `contract` as delivered from `source`, correlated by its order id. */
const fact = <P extends { orderId: string }>(
  contract: MessageContract<P>,
  source: ServiceName,
  payload: NoInfer<P>,
): ConsumedMessage<P> => consumed(contract, payload, { correlationId: payload.orderId, source })

/** OrderCancelled of `orderId` for `reason` (default `customer_requested`), from order, cancelled `at`. */
export const orderCancelled = (orderId: string, reason = 'customer_requested', at = new Date()) =>
  fact(OrderCancelled, 'order', { orderId, customerId: randomUUID(), reason, cancelledAt: at.toISOString() })

/** StockReservationFailed of `orderId` (`out_of_stock`, the short lines `unavailable`), from inventory, failed `at`. */
export const stockReservationFailed = (
  orderId: string,
  unavailable: StockReservationFailed['unavailable'],
  at = new Date(),
) =>
  fact(StockReservationFailed, 'inventory', {
    orderId,
    customerId: randomUUID(),
    reason: 'out_of_stock',
    unavailable,
    failedAt: at.toISOString(),
  })

/** ShipmentFailed of `orderId` for `lines` (`unsupported_country`, AQ), from shipment, failed `at`. */
export const shipmentFailed = (orderId: string, lines: ShipmentFailed['lines'], at = new Date()) =>
  fact(ShipmentFailed, 'shipment', {
    orderId,
    reason: 'unsupported_country',
    country: 'AQ',
    lines,
    failedAt: at.toISOString(),
  })

/** The outbox rows of aggregate `orderId` whose type is `type` (e.g. `StockReleased.type`), in write order. */
export const outboxOfType = async (pool: pg.Pool, orderId: string, type: string): Promise<OutboxRowOf[]> =>
  (await outboxOf(pool, orderId)).filter((row) => row.type === type)

/** The lines of the tests' sample order, a fresh copy: 2 x 1250 + 1 x 1999 = 4499 (EUR cents). */
export const sampleLines = (): OrderCreated['lines'] => [
  { sku: 'MUG-01', quantity: 2, unitPrice: 1250 },
  { sku: 'TEE-M', quantity: 1, unitPrice: 1999 },
]

/** Where the tests' sample order ships to (Porto, PT), a fresh copy. */
export const sampleAddress = (): OrderCreated['shippingAddress'] => ({
  name: 'Ana Lima',
  line1: 'Rua das Flores 1',
  city: 'Porto',
  postalCode: '4000-001',
  country: 'PT',
})
