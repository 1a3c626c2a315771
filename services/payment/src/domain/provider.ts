/**
 * The simulated payment provider: deterministic rules, so tests and demos can choose an outcome by
 * the token they order with. Pure; no I/O. The tokens follow Stripe's test tokens
 * (https://docs.stripe.com/testing#cards), so they read familiar.
 *
 * | paymentMethod                 | outcome                                   |
 * |-------------------------------|-------------------------------------------|
 * | `tok_visa`, `tok_mastercard`, `tok_amex` | captured                       |
 * | `tok_slow`                    | captured, answered after a delay (`answerDelayMs`) |
 * | `tok_chargeDeclined`          | declined, reason `card_declined`          |
 * | `tok_insufficientFunds`       | declined, reason `insufficient_funds`     |
 * | `tok_expiredCard`             | declined, reason `expired_card`           |
 * | any other token               | declined, reason `invalid_payment_method` |
 * | any amount > 99,999,999 minor units | declined, reason `amount_too_large` (Stripe's 8-digit limit) |
 *
 * Refunds of a capture always succeed, in full.
 */

/** Highest amount the provider charges at once, in minor units (Stripe's limit: 8 digits). */
export const MAX_CHARGE_AMOUNT = 99_999_999

/** The token whose charge the provider answers only after a delay: an order that waits long enough to cancel. */
export const SLOW_TOKEN = 'tok_slow'

/** `tok_slow`'s delay when PAYMENT_SLOW_TOKEN_DELAY_MS is not set, ms: time to type `cancel <id>`. */
export const DEFAULT_SLOW_TOKEN_DELAY_MS = 10_000

const CAPTURING = new Set(['tok_visa', 'tok_mastercard', 'tok_amex', SLOW_TOKEN])

const DECLINES: Readonly<Record<string, { reason: string; message: string }>> = {
  tok_chargeDeclined: { reason: 'card_declined', message: 'The card was declined' },
  tok_insufficientFunds: { reason: 'insufficient_funds', message: 'The card has insufficient funds' },
  tok_expiredCard: { reason: 'expired_card', message: 'The card has expired' },
}

/** A charge request: amount in minor units of `currency`. */
export interface ChargeRequest {
  paymentMethod: string
  amount: number
  currency: string
}

/** What the provider answers: the money is captured, or the charge is declined with a reason code. */
export type ChargeOutcome = { outcome: 'captured' } | { outcome: 'declined'; reason: string; message: string }

/** Decides a charge by the rules in this file's table. */
export function charge(request: ChargeRequest): ChargeOutcome {
  if (request.amount > MAX_CHARGE_AMOUNT) {
    return {
      outcome: 'declined',
      reason: 'amount_too_large',
      message: `The amount exceeds ${MAX_CHARGE_AMOUNT} minor units`,
    }
  }
  if (CAPTURING.has(request.paymentMethod)) return { outcome: 'captured' }
  const decline = DECLINES[request.paymentMethod]
  if (decline) return { outcome: 'declined', ...decline }
  return {
    outcome: 'declined',
    reason: 'invalid_payment_method',
    message: 'The provider does not know this token',
  }
}

/**
 * How long the provider takes to answer a charge with `paymentMethod`, ms: `slowTokenDelayMs` for
 * `tok_slow`, 0 for every other token. A demo of a slow provider, so that a person can cancel the
 * order while its payment is pending; the handler waits before it takes the order's lock, so a
 * cancel handled meanwhile is seen and nothing is charged.
 */
export function answerDelayMs(paymentMethod: string, slowTokenDelayMs: number): number {
  return paymentMethod === SLOW_TOKEN ? slowTokenDelayMs : 0
}

/** What a refund request finds: a capture to refund, or why there is nothing to do. */
export type RefundDecision =
  | { kind: 'refund'; amount: number }
  | { kind: 'nothing'; why: 'no-payment' | 'not-captured' | 'already-refunded' }

/**
 * Decides a compensation refund: a capture is refunded in full, exactly once; a declined payment or
 * an unknown one has nothing to refund.
 */
export function decideRefund(
  payment: { status: 'CAPTURED' | 'DECLINED'; amount: number; refunded: boolean } | undefined,
): RefundDecision {
  if (!payment) return { kind: 'nothing', why: 'no-payment' }
  if (payment.status !== 'CAPTURED') return { kind: 'nothing', why: 'not-captured' }
  if (payment.refunded) return { kind: 'nothing', why: 'already-refunded' }
  return { kind: 'refund', amount: payment.amount }
}
