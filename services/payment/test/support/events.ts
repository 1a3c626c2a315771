import { randomUUID } from 'node:crypto'
import type { OrderCreated } from '@saga/contracts'

/** A valid OrderCreated payload with fresh ids: 2 x 1250 + 1 x 1999 = 4499 EUR cents. */
export const orderCreated = (paymentMethod = 'tok_visa'): OrderCreated => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  currency: 'EUR',
  lines: [
    { sku: 'MUG-01', quantity: 2, unitPrice: 1250 },
    { sku: 'TEE-M', quantity: 1, unitPrice: 1999 },
  ],
  totalAmount: 4499,
  shippingAddress: {
    name: 'Ana Lima',
    line1: 'Rua das Flores 1',
    city: 'Porto',
    postalCode: '4000-001',
    country: 'PT',
  },
  paymentMethod,
  createdAt: new Date().toISOString(),
})
