import { describe, expect, it } from 'vitest'
import { judge, type OrderEffects } from './invariants.js'
import { spread } from './table.js'

const confirmed = (over: Partial<OrderEffects> = {}): OrderEffects => ({
  status: 'CONFIRMED',
  reason: null,
  total: 1999n,
  payment: 'captured',
  amount: 1999n,
  reservation: 'reserved',
  shipment: 'created',
  effects: { payment: 1 },
  ...over,
})

describe('judge', () => {
  it('when every outcome has exactly its effects and stock and money balance, then it holds and counts the outcomes', () => {
    const verdict = judge(
      [
        confirmed(),
        confirmed({
          status: 'CANCELLED',
          reason: 'card_declined',
          payment: 'declined',
          reservation: null,
          shipment: null,
        }),
        confirmed({
          status: 'CANCELLED',
          reason: 'out_of_stock',
          payment: 'refunded',
          reservation: 'out_of_stock',
          shipment: null,
        }),
        confirmed({
          status: 'CANCELLED',
          reason: 'unsupported_country',
          payment: 'refunded',
          reservation: 'released',
          shipment: 'unsupported_country',
        }),
      ],
      [{ sku: 'A', available: 9, expected: 9 }],
    )
    expect(verdict).toEqual({
      ok: true,
      problems: [],
      outcomes: {
        CONFIRMED: 1,
        'CANCELLED card_declined': 1,
        'CANCELLED out_of_stock': 1,
        'CANCELLED unsupported_country': 1,
      },
    })
  })

  it('when an order is pending, an effect is doubled, a refund is missing and stock is off, then each is reported', () => {
    const verdict = judge(
      [
        confirmed({ status: 'PENDING' }),
        confirmed({ effects: { payment: 2 } }),
        confirmed({
          status: 'CANCELLED',
          reason: 'out_of_stock',
          reservation: 'out_of_stock',
          shipment: null,
        }),
      ],
      [{ sku: 'A', available: 8, expected: 9 }],
    )
    expect(verdict.ok).toBe(false)
    expect(verdict.problems).toEqual([
      'order not final (PENDING)',
      'payment made more than once',
      'CANCELLED out_of_stock: effects captured/out_of_stock/-, expected refunded/out_of_stock/-',
      'money: 5997 captured and kept, 1999 in CONFIRMED orders',
      'stock A: 8 available, 9 expected',
    ])
  })
})

describe('spread', () => {
  it('when given rounds, then it shows their median and range; one round alone; none as n/a', () => {
    expect(spread([3, 1, 2])).toBe('2 (1–3)')
    expect(spread([1.25, 2.5], 1)).toBe('1.9 (1.3–2.5)')
    expect(spread([7])).toBe('7')
    expect(spread([Number.NaN])).toBe('n/a')
  })
})
