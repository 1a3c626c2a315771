import { COUNTRY_CODES } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { bookShipment, CARRIER_NAME, SUPPORTED_COUNTRIES } from './carrier.js'

const address = (country: string) => ({
  name: 'Ada',
  line1: 'Main St 1',
  city: 'Town',
  postalCode: '12345',
  country,
})

describe('bookShipment', () => {
  it('when the country is supported, then the carrier books it with an SP tracking number', () => {
    const outcome = bookShipment({ orderId: crypto.randomUUID(), address: address('DE') }, 'demo-carrier')
    expect(outcome).toMatchObject({ kind: 'booked', carrier: CARRIER_NAME })
    expect(outcome.kind === 'booked' && outcome.trackingNumber).toMatch(/^SP[0-9A-F]{12}$/)
  })

  it('when the same order is booked twice, then it gets the same tracking number', () => {
    const request = { orderId: crypto.randomUUID(), address: address('US') }
    expect(bookShipment(request, 'demo-carrier')).toEqual(bookShipment(request, 'demo-carrier'))
  })

  it('when two orders are booked, then their tracking numbers differ', () => {
    const a = bookShipment({ orderId: crypto.randomUUID(), address: address('NL') }, 'demo-carrier')
    const b = bookShipment({ orderId: crypto.randomUUID(), address: address('NL') }, 'demo-carrier')
    expect(a.kind === 'booked' && b.kind === 'booked' && a.trackingNumber !== b.trackingNumber).toBe(true)
  })

  it('when the country is Antarctica (AQ), then the shipment is refused as unsupported_country', () => {
    expect(SUPPORTED_COUNTRIES.has('AQ')).toBe(false)
    const outcome = bookShipment({ orderId: crypto.randomUUID(), address: address('AQ') }, 'demo-carrier')
    expect(outcome).toMatchObject({ kind: 'refused', reason: 'unsupported_country' })
    expect(outcome.kind === 'refused' && outcome.detail).toContain('AQ')
  })

  it('when the carrier account is empty, then it throws instead of booking', () => {
    expect(() => bookShipment({ orderId: crypto.randomUUID(), address: address('DE') }, '')).toThrow(
      /account/,
    )
  })
})

describe('SUPPORTED_COUNTRIES', () => {
  it('when compared with ISO 3166-1 alpha-2 as the contracts list it, then every supported code is a real one', () => {
    const known = new Set<string>(COUNTRY_CODES)
    expect([...SUPPORTED_COUNTRIES].filter((code) => !known.has(code))).toEqual([])
  })
})
