import { describe, expect, it } from 'vitest'
import { landing, type SearchMatch } from './search.js'

const A = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0'
const B = '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d'
const match = (kind: SearchMatch['kind'], orderId: string): SearchMatch => ({
  kind,
  orderId,
  service: 'order',
})

describe('landing', () => {
  it('when the matches name one order, whatever the kinds, then its page', () => {
    expect(landing(A, [match('order', A)])).toBe(`/orders/${A}`)
    expect(landing('key-1', [match('idempotencyKey', A), match('message', A)])).toBe(`/orders/${A}`)
  })

  it('when a customer or a prefix names several orders, then the list filtered by it', () => {
    const customer = 'C0FFEE00-0000-4000-8000-000000000000'
    expect(landing(customer, [match('customer', A), match('customer', B)])).toBe(
      `/orders?customerId=${customer.toLowerCase()}`,
    )
    expect(landing('0F1E', [match('idPrefix', A), match('idPrefix', B)])).toBe('/orders?idPrefix=0f1e')
  })

  it('when nothing matched, or several orders of different kinds, then nowhere (the matches are listed)', () => {
    expect(landing(A, [])).toBeNull()
    expect(landing(A, [match('order', A), match('customer', B)])).toBeNull()
    expect(landing(A, [match('trace', A), match('trace', B)])).toBeNull()
  })
})
