import { describe, expect, it } from 'vitest'
import { lockOrder, reserve } from './stock.js'

const stock = (entries: Record<string, number>) => new Map(Object.entries(entries))

describe('reserve', () => {
  it('when every line is covered, then all lines are reserved and the take is summed per sku in sku order', () => {
    const lines = [
      { sku: 'MUG-002', quantity: 2 },
      { sku: 'CAP-001', quantity: 1 },
      { sku: 'MUG-002', quantity: 3 },
    ]
    const outcome = reserve(lines, stock({ 'CAP-001': 1, 'MUG-002': 5 }))
    expect(outcome).toEqual({
      kind: 'reserved',
      take: [
        { sku: 'CAP-001', quantity: 1 },
        { sku: 'MUG-002', quantity: 5 },
      ],
    })
  })

  it('when one line is short, then nothing is reserved and only the short sku is reported', () => {
    const outcome = reserve(
      [
        { sku: 'CAP-001', quantity: 1 },
        { sku: 'MUG-002', quantity: 4 },
      ],
      stock({ 'CAP-001': 10, 'MUG-002': 3 }),
    )
    expect(outcome).toMatchObject({
      kind: 'refused',
      reason: 'out_of_stock',
      short: [{ sku: 'MUG-002', requested: 4, available: 3 }],
    })
  })

  it('when two lines of one sku together exceed the stock, then the order is refused and both lines are reported', () => {
    const outcome = reserve(
      [
        { sku: 'MUG-002', quantity: 2 },
        { sku: 'MUG-002', quantity: 2 },
      ],
      stock({ 'MUG-002': 3 }),
    )
    expect(outcome).toMatchObject({
      kind: 'refused',
      short: [
        { sku: 'MUG-002', requested: 2, available: 3 },
        { sku: 'MUG-002', requested: 2, available: 3 },
      ],
    })
  })

  it('when a sku is unknown, then the order is refused as unknown_sku with zero available', () => {
    const outcome = reserve([{ sku: 'NOPE-1', quantity: 1 }], stock({}))
    expect(outcome).toMatchObject({
      kind: 'refused',
      reason: 'unknown_sku',
      short: [{ sku: 'NOPE-1', requested: 1, available: 0 }],
    })
  })

  it('when the request equals the stock exactly, then it is reserved (the last units can be sold)', () => {
    expect(reserve([{ sku: 'CAP-001', quantity: 2 }], stock({ 'CAP-001': 2 })).kind).toBe('reserved')
  })

  it('when a quantity is not a positive integer, then it throws a RangeError', () => {
    expect(() => reserve([{ sku: 'CAP-001', quantity: 0 }], stock({ 'CAP-001': 2 }))).toThrow(RangeError)
    expect(() => reserve([{ sku: 'CAP-001', quantity: 1.5 }], stock({ 'CAP-001': 2 }))).toThrow(RangeError)
  })
})

describe('lockOrder', () => {
  it('when skus repeat and arrive unsorted, then they come back distinct in code-point order', () => {
    expect(
      lockOrder([
        { sku: 'b', quantity: 1 },
        { sku: 'B', quantity: 1 },
        { sku: 'b', quantity: 2 },
      ]),
    ).toEqual(['B', 'b'])
  })
})
