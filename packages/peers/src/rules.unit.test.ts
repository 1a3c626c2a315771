import { describe, expect, it } from 'vitest'
// The fleet's own rules, from the services' builds (their packages export only the app, so by path):
// these tests fail when a copy in rules.ts drifts from them.
import { charge } from '../../../services/payment/dist/domain/provider.js'
import { SUPPORTED_COUNTRIES } from '../../../services/shipment/dist/domain/carrier.js'
import { declineReason, ships } from './rules.js'

describe('the outcome rules the peers share', () => {
  it("when a token or amount is charged, then it is declined for the fleet's reason or captured as the fleet does", () => {
    const tokens = ['tok_visa', 'tok_mastercard', 'tok_amex', 'tok_slow', 'tok_chargeDeclined']
    tokens.push('tok_insufficientFunds', 'tok_expiredCard', 'tok_unknown', '')
    for (const paymentMethod of tokens) {
      for (const amount of [1, 1999, 99_999_999, 100_000_000]) {
        const fleet = charge({ paymentMethod, amount, currency: 'EUR' })
        expect(declineReason(paymentMethod, amount), `${paymentMethod} ${amount}`).toBe(
          fleet.outcome === 'captured' ? undefined : fleet.reason,
        )
      }
    }
  })

  it("when a country is shipped to, then it ships exactly where the fleet's carrier does", () => {
    for (const country of SUPPORTED_COUNTRIES) expect(ships(country), country).toBe(true)
    for (const country of ['AQ', 'XX', 'de', '']) expect(ships(country), country).toBe(false)
  })
})
