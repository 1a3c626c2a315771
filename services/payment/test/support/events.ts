import { randomUUID } from 'node:crypto'
import type { OrderCreated } from '@saga/contracts'
import { sampleAddress, sampleLines } from '@saga/service-kit/testing'

/** A valid OrderCreated payload with fresh ids: 2 x 1250 + 1 x 1999 = 4499 EUR cents. */
export const orderCreated = (paymentMethod = 'tok_visa'): OrderCreated => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  currency: 'EUR',
  lines: sampleLines(),
  totalAmount: 4499,
  shippingAddress: sampleAddress(),
  paymentMethod,
  createdAt: new Date().toISOString(),
})
