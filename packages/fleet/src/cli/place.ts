import { randomUUID } from 'node:crypto'

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
 * positive integer; everything else the service validates and explains.
 */
export function orderBody(input: PlaceInput) {
  if (input.skus.length === 0) throw new Error('place needs at least one --sku')
  if (input.quantities.length > input.skus.length) throw new Error('more --qty than --sku')
  const items = input.skus.map((sku, i) => {
    const raw = input.quantities[i] ?? '1'
    const quantity = Number(raw)
    if (!Number.isInteger(quantity) || quantity < 1)
      throw new Error(`--qty ${raw}: expected a positive integer`)
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
