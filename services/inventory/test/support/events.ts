import { randomUUID } from 'node:crypto'
import { PaymentProcessed } from '@saga/contracts'
import { consumed } from '@saga/messaging/testing'

/** A line of an order: `quantity` units of `sku` at `unitPrice` cents each. */
export interface OrderLine {
  sku: string
  quantity: number
  unitPrice: number
}

/** Where an order ships to, as PaymentProcessed carries it. */
export type Address = PaymentProcessed['shippingAddress']

/** The shipping address of the test orders, unless a test needs another (Berlin, DE). */
export const BERLIN: Address = {
  name: 'Ada',
  line1: 'Main St 1',
  city: 'Berlin',
  postalCode: '10115',
  country: 'DE',
}

/**
 * The PaymentProcessed delivery of a new order (fresh order, customer and payment ids) of `lines`
 * shipping to `shippingAddress`, as the inventory reactions consume it; the amount is the lines'
 * total in EUR cents and the correlation id the order id.
 */
export function paymentProcessed(lines: OrderLine[], shippingAddress: Address = BERLIN) {
  const orderId = randomUUID()
  return consumed(
    PaymentProcessed,
    {
      orderId,
      customerId: randomUUID(),
      paymentId: randomUUID(),
      amount: lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0),
      currency: 'EUR',
      lines,
      shippingAddress,
      processedAt: new Date().toISOString(),
    },
    orderId,
  )
}
