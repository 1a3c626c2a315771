/**
 * The outcome rules every peer applies, copied from the fleet so each decides an order the same way:
 * - payment (services/payment/src/domain/provider.ts): `tok_visa`, `tok_mastercard`, `tok_amex`, `tok_slow` (without its delay)
 *   capture; `tok_chargeDeclined` declines with `card_declined`, `tok_insufficientFunds` with
 *   `insufficient_funds`, `tok_expiredCard` with `expired_card`, any other token with
 *   `invalid_payment_method`; amounts over 99,999,999 minor units with `amount_too_large`;
 * - stock (services/inventory/src/domain/stock.ts): every line or none, `out_of_stock` when a line
 *   asks for more than is available, `unknown_sku` when a sku has no stock row;
 * - carrier (services/shipment/src/domain/carrier.ts): only the countries below ship, any other
 *   fails with `unsupported_country`.
 * Pure; no I/O.
 */
import { randomUUID } from 'node:crypto'

/** One order line: `quantity` units of `sku` at `unitPrice` minor units. */
export interface Line {
  sku: string
  quantity: number
  unitPrice: number
}

/** An order as every peer receives it (the fleet's POST /orders body, plus its id). */
export interface Order {
  id: string
  customerId: string
  currency: string
  items: Line[]
  shippingAddress: { name: string; line1: string; city: string; postalCode: string; country: string }
  paymentMethod: string
}

const MAX_CHARGE_AMOUNT = 99_999_999
const CAPTURING = new Set(['tok_visa', 'tok_mastercard', 'tok_amex', 'tok_slow'])
const DECLINES: Readonly<Record<string, string>> = {
  tok_chargeDeclined: 'card_declined',
  tok_insufficientFunds: 'insufficient_funds',
  tok_expiredCard: 'expired_card',
}

/** The charge's decline reason code, or undefined when the provider captures `amount` (minor units). */
export function declineReason(paymentMethod: string, amount: number): string | undefined {
  if (amount > MAX_CHARGE_AMOUNT) return 'amount_too_large'
  if (CAPTURING.has(paymentMethod)) return undefined
  return DECLINES[paymentMethod] ?? 'invalid_payment_method'
}

const SUPPORTED_COUNTRIES: ReadonlySet<string> = new Set([
  'AT', 'AU', 'BE', 'CA', 'CH', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GB', 'GR', 'HU', 'IE', 'IS', 'IT',
  'JP', 'LT', 'LU', 'LV', 'NL', 'NO', 'NZ', 'PL', 'PT', 'RO', 'SE', 'SG', 'SI', 'SK', 'US',
]) // prettier-ignore

/** Whether the simulated carrier ships to `country` (ISO 3166-1 alpha-2). */
export const ships = (country: string): boolean => SUPPORTED_COUNTRIES.has(country)

/** An order's total in minor units. */
export const orderTotal = (items: readonly Line[]): number =>
  items.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0)

/** The sku every order buys one unit of (packages/load's), stocked far beyond any run. */
export const PLENTY_SKU = 'LOAD-TEST-001'
/** A second sku stocked at 0: an order with a line of it is cancelled `out_of_stock` after its charge. */
export const EMPTY_SKU = 'LOAD-EMPTY-001'
/** Stock set on each sku before a run (units). */
export const INITIAL_STOCK: Readonly<Record<string, number>> = { [PLENTY_SKU]: 10_000_000, [EMPTY_SKU]: 0 }

/**
 * The failure mix of a benchmark, by order number `n` (0, 1, 2 ... in sending order): out of every
 * 20 orders, 17 take the happy path (packages/load's body), one is declined (`tok_chargeDeclined`,
 * no compensation), one asks for a unit of the empty sku as its second line (charged, then
 * refunded: `out_of_stock`), one ships to Antarctica (charged and reserved, then released and
 * refunded: `unsupported_country`). Every peer and the fleet get the same sequence.
 */
export function orderBody(n: number): Omit<Order, 'id'> {
  const items: Line[] = [{ sku: PLENTY_SKU, quantity: 1, unitPrice: 1999 }]
  if (n % 20 === 11) items.push({ sku: EMPTY_SKU, quantity: 1, unitPrice: 500 })
  return {
    customerId: randomUUID(),
    currency: 'EUR',
    items,
    shippingAddress: {
      name: `Load ${n}`,
      line1: '1 Benchmark Road',
      city: 'Berlin',
      postalCode: '10115',
      country: n % 20 === 15 ? 'AQ' : 'DE',
    },
    paymentMethod: n % 20 === 7 ? 'tok_chargeDeclined' : 'tok_visa',
  }
}
