import { describe, expect, it } from 'vitest'
import { answerDelayMs, charge, decideRefund, MAX_CHARGE_AMOUNT } from './provider.js'

const request = { amount: 4499, currency: 'EUR' }

describe('charge', () => {
  it('when the token is tok_visa, then the charge is captured', () => {
    expect(charge({ ...request, paymentMethod: 'tok_visa' })).toEqual({ outcome: 'captured' })
  })

  it('when the token is tok_slow, then the charge is captured, answered after the slow delay; every other token at once', () => {
    expect(charge({ ...request, paymentMethod: 'tok_slow' })).toEqual({ outcome: 'captured' })
    expect(answerDelayMs('tok_slow', 10_000)).toBe(10_000)
    expect(answerDelayMs('tok_visa', 10_000)).toBe(0)
    expect(answerDelayMs('tok_chargeDeclined', 10_000)).toBe(0)
  })

  it('when the token is a declining test token, then it is declined with its reason', () => {
    const reasons = ['tok_chargeDeclined', 'tok_insufficientFunds', 'tok_expiredCard'].map(
      (paymentMethod) => {
        const outcome = charge({ ...request, paymentMethod })
        return outcome.outcome === 'declined' ? outcome.reason : outcome.outcome
      },
    )
    expect(reasons).toEqual(['card_declined', 'insufficient_funds', 'expired_card'])
  })

  it('when the token is unknown to the provider, then it is declined as invalid_payment_method', () => {
    expect(charge({ ...request, paymentMethod: 'tok_unknown' })).toMatchObject({
      outcome: 'declined',
      reason: 'invalid_payment_method',
    })
  })

  it('when the amount passes the provider limit, then even a good card is declined', () => {
    expect(charge({ ...request, paymentMethod: 'tok_visa', amount: MAX_CHARGE_AMOUNT })).toEqual({
      outcome: 'captured',
    })
    expect(charge({ ...request, paymentMethod: 'tok_visa', amount: MAX_CHARGE_AMOUNT + 1 })).toMatchObject({
      outcome: 'declined',
      reason: 'amount_too_large',
    })
  })
})

describe('decideRefund', () => {
  it('when a capture is not refunded yet, then it is refunded in full', () => {
    expect(decideRefund({ status: 'CAPTURED', amount: 4499, refunded: false })).toEqual({
      kind: 'refund',
      amount: 4499,
    })
  })

  it('when there is no capture or it was refunded already, then there is nothing to refund', () => {
    expect(decideRefund(undefined)).toEqual({ kind: 'nothing', why: 'no-payment' })
    expect(decideRefund({ status: 'DECLINED', amount: 4499, refunded: false })).toEqual({
      kind: 'nothing',
      why: 'not-captured',
    })
    expect(decideRefund({ status: 'CAPTURED', amount: 4499, refunded: true })).toEqual({
      kind: 'nothing',
      why: 'already-refunded',
    })
  })
})
