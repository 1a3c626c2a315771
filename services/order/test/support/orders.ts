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

/** An order as the console reads it, written straight to the tables (times chosen by the test). */
export interface StoredOrderSpec {
  status: 'PENDING' | 'CONFIRMED' | 'CANCELLED'
  createdAt: Date
  /** confirmed_at or cancelled_at (and updated_at); for an ended order. */
  endedAt?: Date
  deadlineAt?: Date | null
  cancellationReason?: string
  failedStep?: 'payment' | 'stock' | 'shipment'
  /** Versioned types in its timeline besides its order.created.v1, e.g. `payment.processed.v1`. */
  facts?: string[]
}

/**
 * Writes an order (one line, 4499 EUR) and its timeline (order.created.v1, then `facts` 1 ms apart)
 * as the service would have left them, with the times of `spec`; returns its id.
 */
export async function storedOrder(db: OrderTestDatabase, spec: StoredOrderSpec): Promise<string> {
  const id = randomUUID()
  const ended = spec.endedAt ?? null
  await db.pool.query(
    `WITH o AS (
       INSERT INTO orders (id, customer_id, status, currency, total_amount, payment_method, ship_name, ship_line1,
         ship_city, ship_postal_code, ship_country, cancellation_reason, failed_step, created_at, updated_at,
         confirmed_at, cancelled_at, deadline_at)
       VALUES ($1::uuid, $2::uuid, $3::"OrderStatus", 'EUR', 4499, 'tok_visa', 'Ana Lima', 'Rua 1', 'Lisboa',
         '1000-001', 'PT', $4::text, $5::text, $6::timestamptz, COALESCE($7::timestamptz, $6::timestamptz),
         CASE WHEN $3::"OrderStatus" = 'CONFIRMED' THEN $7::timestamptz END,
         CASE WHEN $3::"OrderStatus" = 'CANCELLED' THEN $7::timestamptz END, $8::timestamptz)
       RETURNING id
     ), l AS (
       INSERT INTO order_lines (order_id, line_no, sku, quantity, unit_price) SELECT id, 1, 'MUG-001', 1, 4499 FROM o
     )
     INSERT INTO order_events (message_id, order_id, type, source, occurred_at, data)
     SELECT gen_random_uuid(), o.id, t.type, split_part(t.type, '.', 1), $6::timestamptz + t.n * interval '1 ms', '{}'
     FROM o, unnest($9::text[]) WITH ORDINALITY AS t(type, n)`,
    [
      id,
      randomUUID(),
      spec.status,
      spec.cancellationReason ?? null,
      spec.failedStep ?? null,
      spec.createdAt,
      ended,
      spec.deadlineAt === undefined ? new Date(spec.createdAt.getTime() + 600_000) : spec.deadlineAt,
      ['order.created.v1', ...(spec.facts ?? [])],
    ],
  )
  return id
}
