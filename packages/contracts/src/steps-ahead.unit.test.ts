import { describe, expect, it } from 'vitest'
import { sagaFacts, stepsAhead } from './saga-map.js'

/** `service/handler` of each step, with `*` marking the ones waited for now. */
const road = (seen: string[], ended: boolean) =>
  stepsAhead(seen, ended).map((s) => `${s.waiting ? '*' : ''}${s.service}/${s.handler}`)

describe('stepsAhead', () => {
  it('when a running order has only its first fact, then the rest of the confirmed walk is ahead and payment is waited for', () => {
    const steps = stepsAhead(['order.created'], false)
    expect(road(['order.created'], false)).toEqual([
      '*payment/process-payment-when-order-created',
      'inventory/reserve-stock-when-payment-processed',
      'shipment/create-shipment-when-stock-reserved',
      'order/confirm-order-when-shipment-created',
    ])
    // The decision's failure stays an alternative of its step, not a branch of its own.
    expect(steps[0]).toMatchObject({
      reactsTo: 'order.created',
      oneOf: ['payment.processed', 'payment.failed'],
    })
    expect(steps.map((s) => s.reactsTo)).toEqual(sagaFacts().slice(0, 4))
  })

  it('when a running order waits for shipment, then shipment is waited for and only the confirmation follows', () => {
    expect(road(['order.created', 'payment.processed', 'stock.reserved'], false)).toEqual([
      '*shipment/create-shipment-when-stock-reserved',
      'order/confirm-order-when-shipment-created',
    ])
  })

  it('when a running order had a failure, then its compensations are ahead, both waited for, and no forward step', () => {
    expect(road(['order.created', 'payment.processed', 'stock.reservation-failed'], false)).toEqual([
      '*order/cancel-order-when-stock-reservation-failed',
      '*payment/refund-payment-when-stock-reservation-failed',
    ])
  })

  it('when an order is confirmed, then nothing is ahead', () => {
    expect(stepsAhead(sagaFacts(), true)).toEqual([])
  })

  it('when an order was cancelled by its deadline while shipment was away, then the branch not taken is not ahead, only the undos owed', () => {
    const seen = ['order.created', 'payment.processed', 'stock.reserved', 'order.cancelled']
    // Shipment did nothing for the order: its undo is not owed; no step of the confirmed walk is left.
    expect(road(seen, true)).toEqual([
      '*payment/refund-payment-when-order-cancelled',
      '*inventory/release-stock-when-order-cancelled',
    ])
    expect(road([...seen, 'payment.refunded', 'stock.released'], true)).toEqual([])
  })

  it('when a cancelled order was refunded by its failure, then the refund is not owed twice', () => {
    const seen = ['order.created', 'payment.processed', 'stock.reservation-failed', 'order.cancelled']
    expect(road(seen, true)).toEqual(['*payment/refund-payment-when-stock-reservation-failed'])
    expect(road([...seen, 'payment.refunded'], true)).toEqual([])
  })

  it('when a payment was declined and the order cancelled, then nothing is owed', () => {
    expect(road(['order.created', 'payment.failed', 'order.cancelled'], true)).toEqual([])
  })
})
