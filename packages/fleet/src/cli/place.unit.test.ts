import { describe, expect, it } from 'vitest'
import { refusal } from './commands.js'
import { orderBody } from './place.js'

const base = { unitPrice: 1999, currency: 'EUR', country: 'DE', paymentMethod: 'tok_visa' }

describe('orderBody', () => {
  it('when skus and quantities are given in pairs, then each line gets its quantity', () => {
    const body = orderBody({ ...base, skus: ['A', 'B'], quantities: [2, 3] })
    expect(body.items).toEqual([
      { sku: 'A', quantity: 2, unitPrice: 1999 },
      { sku: 'B', quantity: 3, unitPrice: 1999 },
    ])
    expect(body.shippingAddress.country).toBe('DE')
  })

  it('when a quantity is missing, then the line orders one unit', () => {
    expect(orderBody({ ...base, skus: ['A'], quantities: [] }).items[0]?.quantity).toBe(1)
  })

  it('when there is no sku, or more quantities than skus, then it throws saying so', () => {
    expect(() => orderBody({ ...base, skus: [], quantities: [] })).toThrow('at least one --sku')
    expect(() => orderBody({ ...base, skus: ['A'], quantities: [1, 2] })).toThrow('more --qty than --sku')
  })

  it('when a quantity is a number the service refuses, then it is passed through for its 400', () => {
    const body = orderBody({ ...base, skus: ['A', 'B'], quantities: [-1, 0] })
    expect(body.items.map((i) => i.quantity)).toEqual([-1, 0])
  })
})

describe('refusal', () => {
  it('when the service refused fields, then one line says so and one indented line names each field', () => {
    expect(
      refusal('POST /orders', 400, {
        message: 'The request is invalid',
        details: [
          { path: 'body.lines.0.quantity', issue: 'must be at least 1' },
          { path: 'body.currency', issue: 'must be an ISO 4217 code' },
        ],
      }),
    ).toBe(
      'POST /orders answered 400: The request is invalid\n' +
        '  body.lines.0.quantity: must be at least 1\n' +
        '  body.currency: must be an ISO 4217 code',
    )
  })

  it('when the body is not the error shape, then it is printed as JSON on the line', () => {
    expect(refusal('POST /orders', 502, { status: 'x' })).toBe('POST /orders answered 502: {"status":"x"}')
  })
})
