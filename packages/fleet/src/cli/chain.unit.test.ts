import { describe, expect, it } from 'vitest'
import { publisherOf, waitingFor } from './chain.js'

// The facts of an order whose payment was processed and whose stock was reserved.
const reserved = ['order.created', 'payment.processed', 'stock.reserved']

describe('waitingFor', () => {
  it('when nothing was seen, then it waits for order.created from order', () => {
    expect(waitingFor([])).toEqual([{ service: 'order', oneOf: ['order.created'] }])
  })

  it('when the payment was processed, then it waits for inventory to reserve or refuse', () => {
    expect(waitingFor(['order.created', 'payment.processed'])).toEqual([
      { service: 'inventory', oneOf: ['stock.reserved', 'stock.reservation-failed'] },
    ])
  })

  it('when the shipment failed and only the cancel happened, then it still waits for the refund and the release', () => {
    const seen = [...reserved, 'shipment.failed', 'order.cancelled']
    expect(waitingFor(seen).map((w) => w.oneOf[0])).toEqual(['payment.refunded', 'stock.released'])
  })

  it('when the deadline or the customer cancelled the order, then it waits for nothing, even after a late step fact', () => {
    expect(waitingFor(['order.created', 'payment.processed', 'order.cancelled'])).toEqual([])
    const late = [...reserved, 'order.cancelled', 'shipment.created']
    expect(waitingFor(late)).toEqual([])
  })

  it('when the order was confirmed, then it waits for nothing', () => {
    const seen = [...reserved, 'shipment.created', 'order.confirmed']
    expect(waitingFor(seen)).toEqual([])
  })
})

describe('publisherOf', () => {
  it('when the key is a stock event, then inventory publishes it', () => {
    expect(publisherOf('stock.reservation-failed')).toBe('inventory')
    expect(publisherOf('payment.refunded')).toBe('payment')
  })
})
