import { randomUUID } from 'node:crypto'
import type { CreateOrderBody } from '../../src/schemas.js'

/** A valid POST /orders body with a fresh customer id: 2 x 1250 + 1 x 1999 = 4499 EUR cents. */
export const orderBody = (overrides: Partial<CreateOrderBody> = {}): CreateOrderBody => ({
  customerId: randomUUID(),
  currency: 'EUR',
  items: [
    { sku: 'MUG-01', quantity: 2, unitPrice: 1250 },
    { sku: 'TEE-M', quantity: 1, unitPrice: 1999 },
  ],
  shippingAddress: {
    name: 'Ana Lima',
    line1: 'Rua das Flores 1',
    city: 'Porto',
    postalCode: '4000-001',
    country: 'PT',
  },
  paymentMethod: 'tok_visa',
  ...overrides,
})
