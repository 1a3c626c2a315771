import { describe, expect, it } from 'vitest'
import { cancellationLabel, cancelNote, decide, orderTotal, waitingStep, type OrderStatus } from './order.js'

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

describe('cancellations by the order itself', () => {
  it('when the customer cancels a PENDING order, then it is CANCELLED with no failed step', () => {
    expect(decide('PENDING', { kind: 'cancel', reason: 'customer_requested' }, now)).toEqual({
      kind: 'cancelled',
      status: 'CANCELLED',
      reason: 'customer_requested',
      failedStep: undefined,
      at: now,
    })
  })

  it('when the timeline shows how far the chain got, then the deadline names the step it was waiting for', () => {
    expect(waitingStep({ paymentProcessed: false, stockReserved: false })).toBe('payment')
    expect(waitingStep({ paymentProcessed: true, stockReserved: false })).toBe('stock')
    expect(waitingStep({ paymentProcessed: true, stockReserved: true })).toBe('shipment')
  })

  it('when a cancellation is counted, then its label is the failed step or the order’s own reason, never a step’s reason code', () => {
    expect(cancellationLabel('card_declined', 'payment')).toBe('payment')
    expect(cancellationLabel('unsupported_country', 'shipment')).toBe('shipment')
    expect(cancellationLabel('deadline_exceeded', 'stock')).toBe('deadline_exceeded')
    expect(cancellationLabel('customer_requested', undefined)).toBe('customer_requested')
    expect(cancellationLabel('operator_requested', undefined)).toBe('operator_requested')
    expect(cancellationLabel('constructor', 'stock')).toBe('stock')
  })

  it('when the timeline notes a cancellation, then it says who did it', () => {
    expect(cancelNote('customer_requested', undefined)).toBe('cancelled by the customer')
    expect(cancelNote('operator_requested', undefined)).toBe('cancelled by an operator')
    expect(cancelNote('deadline_exceeded', 'shipment')).toBe(
      'cancelled by its deadline while waiting for shipment',
    )
    expect(cancelNote('out_of_stock', 'stock')).toBe('cancelled because stock failed (out_of_stock)')
  })
})
