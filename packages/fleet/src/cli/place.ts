import { randomUUID } from 'node:crypto'

/** What `place` sends: the POST /orders body of the order service. */
export interface PlaceInput {
  skus: string[]
  /** Per line, in the order of `skus`; a missing one is 1. */
  quantities: number[]
  unitPrice: number
  currency: string
  country: string
  paymentMethod: string
}

/**
 * Builds the POST /orders body from the command line: `--sku` and `--qty` pair up in order
 * (`--sku A --qty 1 --sku B --qty 2`), a missing `--qty` is 1. Any number (0, -1, 1.5) is passed
 * through, so the order service answers it with its own 400 naming the field (its rules:
 * services/order/README.md).
 * @throws Error when there is no sku, or more quantities than skus
 */
export function orderBody(input: PlaceInput) {
  if (input.skus.length === 0) throw new Error('place needs at least one --sku')
  if (input.quantities.length > input.skus.length) throw new Error('more --qty than --sku')
  const items = input.skus.map((sku, i) => ({
    sku,
    quantity: input.quantities[i] ?? 1,
    unitPrice: input.unitPrice,
  }))
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
