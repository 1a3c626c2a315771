import { randomUUID } from 'node:crypto'
import { PaymentProcessed } from '@saga/contracts'
import { consumed } from '@saga/messaging/testing'
import type pg from 'pg'

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

/** An address no carrier serves (McMurdo, AQ): shipping there fails with `unsupported_country`. */
export const MCMURDO: Address = {
  name: 'Ada',
  line1: 'Main St 1',
  city: 'McMurdo',
  postalCode: '0000',
  country: 'AQ',
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

/** An order of one line over a fresh sku put in stock first (`stockedOrder`), its PaymentProcessed not yet delivered. */
export interface StockedOrder {
  sku: string
  orderId: string
  lines: OrderLine[]
  /** The order's PaymentProcessed delivery. */
  paid: ReturnType<typeof paymentProcessed>
}

/**
 * Puts a fresh sku `<skuPrefix>-<random>` in stock with `available` units through `pool`, and makes the
 * PaymentProcessed of an order of `quantity` of them at `unitPrice` cents, shipping to `shippingAddress`.
 */
export async function stockedOrder(
  pool: pg.Pool,
  item: { skuPrefix: string; available: number; quantity: number; unitPrice: number },
  shippingAddress: Address = BERLIN,
): Promise<StockedOrder> {
  const sku = `${item.skuPrefix}-${randomUUID().slice(0, 8)}`
  await pool.query('INSERT INTO stock (sku, available) VALUES ($1, $2)', [sku, item.available])
  const lines = [{ sku, quantity: item.quantity, unitPrice: item.unitPrice }]
  const paid = paymentProcessed(lines, shippingAddress)
  return { sku, orderId: paid.payload.orderId, lines, paid }
}
