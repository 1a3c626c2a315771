import { describe, expect, it } from 'vitest'
import { orderBody } from './place.js'

const base = { unitPrice: 1999, currency: 'EUR', country: 'DE', paymentMethod: 'tok_visa' }

describe('orderBody', () => {
  it('when skus and quantities are given in pairs, then each line gets its quantity', () => {
    const body = orderBody({ ...base, skus: ['A', 'B'], quantities: ['2', '3'] })
    expect(body.items).toEqual([
      { sku: 'A', quantity: 2, unitPrice: 1999 },
      { sku: 'B', quantity: 3, unitPrice: 1999 },
    ])
    expect(body.shippingAddress.country).toBe('DE')
  })

  it('when a quantity is missing, then the line orders one unit', () => {
    expect(orderBody({ ...base, skus: ['A'], quantities: [] }).items[0]?.quantity).toBe(1)
  })

  it('when a quantity is not a positive integer, then it throws naming it', () => {
    expect(() => orderBody({ ...base, skus: ['A'], quantities: ['1.5'] })).toThrow('--qty 1.5')
  })
})
