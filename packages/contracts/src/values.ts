/**
 * Value schemas shared by the events (and by the HTTP APIs that produce them). Limits live here so
 * the API that accepts an order and the events that carry it agree on what a valid order is.
 */
import { z } from 'zod'
import { COUNTRY_CODES, CURRENCY_CODES, CURRENCY_MINOR_UNITS, type CurrencyCode } from './iso-codes.js'

/** Most units of one SKU on one order line; more is a typo or abuse, not an order. */
export const MAX_LINE_QUANTITY = 1_000
/** Most lines on one order. */
export const MAX_ORDER_LINES = 100
/** Highest unit price in minor units (1,000,000.00 in a 2-digit currency). */
export const MAX_UNIT_PRICE = 100_000_000
/** Highest amount anywhere, in minor units: MAX_ORDER_LINES x MAX_LINE_QUANTITY x MAX_UNIT_PRICE = 1e13, still an exact integer in JSON/JS. */
export const MAX_AMOUNT = MAX_ORDER_LINES * MAX_LINE_QUANTITY * MAX_UNIT_PRICE

/**
 * A printable text field: 1..max characters, not blank, without control characters and without
 * unpaired UTF-16 surrogates. Both would reach the database and fail there as a 500: PostgreSQL
 * cannot store U+0000 in text, and rejects a lone surrogate escape (`"\ud800"`) in jsonb.
 */
export const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(
      // Code units: anything but C0/DEL controls and surrogates, or a high surrogate followed by a low one.
      // eslint-disable-next-line no-control-regex -- matching control characters is the point
      /^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/,
      { error: 'must not contain control characters (such as NUL) or unpaired surrogates' },
    )
    .regex(/\S/, { error: 'must not be blank' })

/** A positive amount of money in minor units of its currency (cents for EUR, yen for JPY). */
export const MinorUnits = z.int().min(0).max(MAX_AMOUNT).meta({ description: 'Amount in minor units' })

/** An ISO 4217 alphabetic currency code, e.g. `EUR`. */
export const Currency = z
  .enum(CURRENCY_CODES, { error: 'must be an ISO 4217 currency code in upper case, such as "EUR"' })
  .meta({ description: 'ISO 4217 alphabetic currency code' })
export type Currency = z.infer<typeof Currency>

/** An ISO 3166-1 alpha-2 country code, upper case, e.g. `DE`. */
export const Country = z
  .enum(COUNTRY_CODES, { error: 'must be an ISO 3166-1 alpha-2 country code in upper case, such as "DE"' })
  .meta({ description: 'ISO 3166-1 alpha-2 country code' })

/**
 * An amount of money with its currency, as one value: `{ amount, currency }`, `amount` an integer in
 * minor units of `currency` (`MinorUnits`: 0..MAX_AMOUNT; 4499 EUR is 44.99 €, 4499 JPY is ¥4499).
 */
export const Money = z
  .object({ amount: MinorUnits, currency: Currency })
  .meta({ description: 'Amount in minor units of its ISO 4217 currency' })
export type Money = z.infer<typeof Money>

/** Digits after the decimal point of `currency` (ISO 4217 minor unit), e.g. 2 for EUR, 0 for JPY. */
export const minorUnitExponent = (currency: CurrencyCode): number => CURRENCY_MINOR_UNITS[currency]

/** A stock-keeping unit: 1-64 of letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const Sku = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'must be letters, digits, ".", "_" or "-"' })

/** Units of one SKU on one line: 1..MAX_LINE_QUANTITY. */
export const Quantity = z.int().min(1).max(MAX_LINE_QUANTITY)

/** Price of one unit in minor units: 1..MAX_UNIT_PRICE (free lines are not sold through the saga). */
export const UnitPrice = z.int().min(1).max(MAX_UNIT_PRICE)

/** One order line: `{ sku, quantity, unitPrice }`, unitPrice in minor units of the order's currency. */
export const OrderLine = z.object({ sku: Sku, quantity: Quantity, unitPrice: UnitPrice })
export type OrderLine = z.infer<typeof OrderLine>

/** The lines of an order: 1..MAX_ORDER_LINES. */
export const OrderLines = z.array(OrderLine).min(1).max(MAX_ORDER_LINES)

/** Where an order is shipped to. */
export const ShippingAddress = z.object({
  name: text(200),
  line1: text(200),
  city: text(100),
  postalCode: text(20),
  country: Country,
})
export type ShippingAddress = z.infer<typeof ShippingAddress>

/**
 * A payment method token of the (simulated) provider, e.g. `tok_visa`. Never a card number: the
 * token is what travels in events and logs.
 */
export const PaymentMethod = z
  .string()
  .min(5)
  .max(64)
  .regex(/^tok_[A-Za-z0-9_]+$/, { error: 'must be a payment token like "tok_visa"' })

/**
 * A machine-readable reason for a failure, snake_case, e.g. `card_declined`, `out_of_stock`,
 * `unsupported_country`. Open on purpose: a producer may add reasons without a new event version.
 */
export const ReasonCode = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z][a-z0-9_]*$/, { error: 'must be a snake_case reason code' })

/**
 * A UUID as PostgreSQL's `uuid` type reads it: 32 hexadecimal digits in groups of 8-4-4-4-12, upper
 * or lower case, any version and variant (the nil and max UUIDs included); services make v4 or v7.
 * The API takes this canonical form only (PostgreSQL also reads braces and digits without hyphens).
 * Not zod's `z.uuid()`: it checks RFC 9562's version and variant digits and takes the max UUID in
 * lower case only (`FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF` invalid, `ffffffff-...` valid), which is
 * neither case-insensitive nor what the database accepts.
 */
export const Id = z.guid({
  error: (issue) =>
    issue.input === undefined ? 'is required' : 'must be a UUID: 32 hexadecimal digits as 8-4-4-4-12',
})

/**
 * A page size from a query string (`?limit=50`): a whole number from 1 to `max`, refused in those
 * words (zod's own would read `expected number, received NaN` for `?limit=abc`).
 */
export const pageLimit = (max: number) => {
  const error = `must be a whole number from 1 to ${max}`
  return z.coerce.number({ error }).int({ error }).min(1, { error }).max(max, { error })
}

/** An instant as an ISO 8601 / RFC 3339 string with offset, e.g. `2026-01-31T12:00:00.000Z`. */
export const Instant = z.iso.datetime({ offset: true })

/** Sum of quantity x unitPrice over `lines`, in minor units. */
export const lineTotal = (lines: ReadonlyArray<Pick<OrderLine, 'quantity' | 'unitPrice'>>): number =>
  lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0)
