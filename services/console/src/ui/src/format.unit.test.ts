import { describe, expect, it } from 'vitest'
import { eventNameOf } from '@saga/contracts'
import { factName } from './format.js'

describe('factName', () => {
  it('when a fact is named from its versioned type, then v1 is the bare name and a later version carries it, as the contracts name them', () => {
    for (const type of [
      'order.created.v1',
      'order.created.v2',
      'stock.reservation-failed.v1',
      'order.created.v10',
    ])
      expect(factName(type)).toBe(eventNameOf(type))
    expect(factName('order.created.v2')).toBe('OrderCreatedV2')
    expect(factName('stock.reservation-failed.v1')).toBe('StockReservationFailed')
  })

  it('when a type has no version suffix, then it is named like its routing key', () => {
    expect(factName('order.created')).toBe('OrderCreated')
  })
})
