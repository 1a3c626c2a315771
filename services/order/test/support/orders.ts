import { randomUUID } from 'node:crypto'
import { PaymentFailed, ShipmentCreated } from '@saga/contracts'
import type { ConsumedMessage } from '@saga/messaging'
import { consumed, outboxOf, type OutboxRowOf } from '@saga/messaging/testing'
import type { CreateOrderBody } from '../../src/schemas.js'
import { sampleAddress, sampleLines, type ServiceTestDatabase } from '@saga/service-kit/testing'
import type { PrismaClient } from '../../src/generated/prisma/client.js'

/** A per-run database of the order service (service-kit's `useServiceTestDatabase` on its `database`). */
export type OrderTestDatabase = ServiceTestDatabase<PrismaClient>

/** A valid POST /orders body with a fresh customer id: 2 x 1250 + 1 x 1999 = 4499 EUR cents. */
export const orderBody = (overrides: Partial<CreateOrderBody> = {}): CreateOrderBody => ({
  customerId: randomUUID(),
  currency: 'EUR',
  items: sampleLines(),
  shippingAddress: sampleAddress(),
  paymentMethod: 'tok_visa',
  ...overrides,
})

/** ShipmentCreated for `orderId` as shipment sends it (a fresh shipment id), created `at`. */
export const shipmentCreated = (orderId: string, at = new Date()): ConsumedMessage<ShipmentCreated> =>
  consumed(
    ShipmentCreated,
    {
      orderId,
      shipmentId: randomUUID(),
      carrier: 'demo-carrier',
      trackingNumber: 'DC1',
      createdAt: at.toISOString(),
    },
    { correlationId: orderId, source: 'shipment' },
  )

/** PaymentFailed for `orderId` as payment sends it: 4499 EUR declined (`card_declined`) `at`. */
export const paymentFailed = (orderId: string, at = new Date()): ConsumedMessage<PaymentFailed> =>
  consumed(
    PaymentFailed,
    {
      orderId,
      customerId: randomUUID(),
      paymentId: randomUUID(),
      amount: 4499,
      currency: 'EUR',
      reason: 'card_declined',
      failedAt: at.toISOString(),
    },
    { correlationId: orderId, source: 'payment' },
  )

/** The order's outbox rows of `contract`'s type (e.g. OrderCancelled), in the order they were written. */
export const emitted = async (
  db: OrderTestDatabase,
  orderId: string,
  contract: { type: string },
): Promise<OutboxRowOf[]> => (await outboxOf(db.pool, orderId)).filter((row) => row.type === contract.type)
