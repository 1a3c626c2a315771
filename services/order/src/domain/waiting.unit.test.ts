import { describe, expect, it } from 'vitest'
import { WAIT_STEPS, waitingFor } from './waiting.js'

describe('WAIT_STEPS', () => {
  it('when derived from the saga map, then each step of the chain follows the fact before it', () => {
    expect(WAIT_STEPS).toEqual([
      { after: 'order.created.v1', service: 'payment' },
      { after: 'payment.processed.v1', service: 'inventory' },
      { after: 'stock.reserved.v1', service: 'shipment' },
    ])
  })
})

describe('waitingFor', () => {
  it.each<[string[], string]>([
    [[], 'payment'],
    [['order.created.v1'], 'payment'],
    [['order.created.v1', 'payment.processed.v1'], 'inventory'],
    [['order.created.v1', 'payment.processed.v1', 'stock.reserved.v1'], 'shipment'],
    [['order.created.v1', 'stock.reserved.v1'], 'shipment'],
    [['stock.reserved.v1', 'payment.processed.v1', 'order.created.v1'], 'shipment'],
    [['order.created.v1', 'payment.refunded.v1'], 'payment'],
  ])('when the timeline holds %j, then the order waits for %s', (seen, expected) => {
    expect(waitingFor(seen)).toBe(expected)
  })
})
