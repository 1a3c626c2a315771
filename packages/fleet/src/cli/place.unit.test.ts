import { describe, expect, it } from 'vitest'
import { orderBody, parsePlaceArgs } from './place.js'

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

  it('when a quantity is not a number, then it throws naming it', () => {
    expect(() => orderBody({ ...base, skus: ['A'], quantities: ['two'] })).toThrow('--qty two')
  })

  it('when a quantity is a number the service refuses, then it is passed through for its 400', () => {
    const body = orderBody({ ...base, skus: ['A', 'B'], quantities: ['-1', '0'] })
    expect(body.items.map((i) => i.quantity)).toEqual([-1, 0])
  })
})

describe('parsePlaceArgs', () => {
  it('when a negative quantity is written --qty=-1, then it is read as the value', () => {
    const values = parsePlaceArgs(['--sku', 'A', '--qty=-1'])
    expect(values.qty).toEqual(['-1'])
    expect(values.sku).toEqual(['A'])
  })

  it("when a negative quantity is written --qty -1, then one line says to write --qty=-1, without node's own text", () => {
    expect(() => parsePlaceArgs(['--sku', 'A', '--qty', '-1'])).toThrow(
      new Error("--qty -1: a value starting with '-' is written --qty=-1"),
    )
    // The value named is the one after the --qty that took it, not an earlier --qty.
    expect(() => parsePlaceArgs(['--sku', 'A', '--qty', '2', '--sku', 'B', '--qty', '-3'])).toThrow(
      new Error("--qty -3: a value starting with '-' is written --qty=-3"),
    )
  })

  it('when options are left out, then the defaults apply', () => {
    const values = parsePlaceArgs(['--sku', 'A'])
    expect(values).toMatchObject({ price: '1999', currency: 'EUR', country: 'DE', follow: false })
  })
})
