import { describe, expect, it } from 'vitest'
import { decide, orderTotal, type OrderStatus } from './order.js'

const now = new Date('2026-01-31T12:00:00.000Z')
const cancel = { kind: 'cancel', reason: 'card_declined', failedStep: 'payment' } as const
const confirm = { kind: 'confirm', shipmentId: '0190a3c2-0000-7000-8000-000000000001' } as const

describe('orderTotal', () => {
  it('when lines are given, then the total is the sum of quantity x unitPrice in minor units', () => {
    expect(
      orderTotal([
        { quantity: 2, unitPrice: 1250 },
        { quantity: 3, unitPrice: 1999 },
      ]),
    ).toBe(8497)
  })

  it('when there are no lines, then the total is zero', () => {
    expect(orderTotal([])).toBe(0)
  })

  it('when the sum leaves the exact integer range, then it throws instead of rounding money', () => {
    expect(() => orderTotal([{ quantity: 2, unitPrice: Number.MAX_SAFE_INTEGER }])).toThrow(RangeError)
  })
})

describe('decide', () => {
  it('when a PENDING order is confirmed, then it becomes CONFIRMED at the given time', () => {
    expect(decide('PENDING', confirm, now)).toEqual({ kind: 'confirmed', status: 'CONFIRMED', at: now })
  })

  it('when a PENDING order is cancelled, then it becomes CANCELLED keeping reason and step', () => {
    expect(decide('PENDING', cancel, now)).toEqual({
      kind: 'cancelled',
      status: 'CANCELLED',
      reason: 'card_declined',
      failedStep: 'payment',
      at: now,
    })
  })

  it('when a terminal order gets any command, then it stays unchanged and says why', () => {
    const cases: [OrderStatus, typeof confirm | typeof cancel, string][] = [
      ['CONFIRMED', confirm, 'already-confirmed'],
      ['CONFIRMED', cancel, 'confirmed-orders-are-never-cancelled'],
      ['CANCELLED', cancel, 'already-cancelled'],
      ['CANCELLED', confirm, 'cancelled-orders-are-never-confirmed'],
    ]
    for (const [status, command, why] of cases) {
      const transition =
        command.kind === 'confirm' ? decide(status, command, now) : decide(status, command, now)
      expect(transition).toEqual({ kind: 'unchanged', why })
    }
  })
})
