import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'

/** What `place` sends: the POST /orders body of the order service. */
export interface PlaceInput {
  skus: string[]
  quantities: string[]
  unitPrice: number
  currency: string
  country: string
  paymentMethod: string
}

/**
 * Builds the POST /orders body from the command line: `--sku` and `--qty` pair up in order
 * (`--sku A --qty 1 --sku B --qty 2`), a missing `--qty` is 1. Throws on a quantity that is not a
 * number; any number (0, -1, 1.5) is passed through, so the order service answers it with its own 400
 * naming the field (its rules: services/order/README.md).
 */
export function orderBody(input: PlaceInput) {
  if (input.skus.length === 0) throw new Error('place needs at least one --sku')
  if (input.quantities.length > input.skus.length) throw new Error('more --qty than --sku')
  const items = input.skus.map((sku, i) => {
    const raw = input.quantities[i] ?? '1'
    const quantity = Number(raw)
    if (raw.trim() === '' || !Number.isFinite(quantity)) throw new Error(`--qty ${raw}: expected a number`)
    return { sku, quantity, unitPrice: input.unitPrice }
  })
  return {
    customerId: randomUUID(),
    currency: input.currency,
    items,
    shippingAddress: {
      name: 'Ada Lovelace',
      line1: '12 Analytical Engine Street',
      city: 'London',
      postalCode: 'N1 9GU',
      country: input.country,
    },
    paymentMethod: input.paymentMethod,
  }
}

/**
 * The options of `place`, parsed; every value is a string (or list of them) except `follow`.
 * @throws Error with node's parseArgs message, or for a value starting with '-' written after a
 * space (`--qty -1`) one line naming the `--qty=-1` form
 */
export function parsePlaceArgs(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        sku: { type: 'string', multiple: true, default: [] },
        qty: { type: 'string', multiple: true, default: [] },
        price: { type: 'string', default: '1999' },
        currency: { type: 'string', default: 'EUR' },
        country: { type: 'string', default: 'DE' },
        payment: { type: 'string', default: 'tok_visa' },
        follow: { type: 'boolean', default: false },
        timeout: { type: 'string', default: '30000' },
      },
    }).values
  } catch (error) {
    // node:util parseArgs refuses `--qty -1` as "argument is ambiguous" (the value looks like an
    // option) in three lines of its own; say it once, with the form that works for this value.
    const message = error instanceof Error ? error.message : String(error)
    if (/ambiguous/.test(message)) {
      const option = /'(--[a-z]+)/.exec(message)?.[1] ?? '--option'
      const at = args.findIndex((arg, i) => arg === option && args[i + 1]?.startsWith('-'))
      const value = args[at + 1] ?? '-1'
      throw new Error(`${option} ${value}: a value starting with '-' is written ${option}=${value}`, {
        cause: error,
      })
    }
    throw error
  }
}
