import { randomUUID } from 'node:crypto'
import { upcastOrderCreatedV1toV2, type OrderCreatedV1, type OrderCreatedV2 } from '@saga/contracts'
import { sampleAddress, sampleLines } from '@saga/service-kit/testing'

/** A valid OrderCreated v1 payload with fresh ids: 2 x 1250 + 1 x 1999 = 4499 EUR cents. */
export const orderCreatedV1 = (paymentMethod = 'tok_visa'): OrderCreatedV1 => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  currency: 'EUR',
  lines: sampleLines(),
  totalAmount: 4499,
  shippingAddress: sampleAddress(),
  paymentMethod,
  createdAt: new Date().toISOString(),
})

/** The same order as `orderCreatedV1`, as the v2 payload the handler takes: `total: { amount: 4499, currency: 'EUR' }`. */
export const orderCreated = (paymentMethod = 'tok_visa'): OrderCreatedV2 =>
  upcastOrderCreatedV1toV2(orderCreatedV1(paymentMethod))
