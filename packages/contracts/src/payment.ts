/** Events the payment service produces. */
import { z } from 'zod'
import { defineEvent } from './define.js'
import { Currency, Id, Instant, MinorUnits, OrderLines, ReasonCode, ShippingAddress, text } from './values.js'

/**
 * What a charge attempt is about, captured or declined: the order and its customer, the payment
 * and the amount (minor units of `currency`) it was for.
 */
const Charge = z.object({
  orderId: Id,
  customerId: Id,
  paymentId: Id,
  amount: MinorUnits,
  currency: Currency,
})

/**
 * The order's total was captured. Carries the lines and the address on to inventory and shipment,
 * so neither ever asks the order service.
 */
export const PaymentProcessedSchema = Charge.extend({
  lines: OrderLines,
  shippingAddress: ShippingAddress,
  processedAt: Instant,
})
export const PaymentProcessed = defineEvent('payment.processed.v1', PaymentProcessedSchema)
export type PaymentProcessed = z.infer<typeof PaymentProcessedSchema>

/**
 * The provider declined the charge; nothing was captured. `reason` e.g. `card_declined`,
 * `insufficient_funds`; `message` is for people, not for code.
 */
export const PaymentFailedSchema = Charge.extend({
  reason: ReasonCode,
  message: text(500).optional(),
  failedAt: Instant,
})
export const PaymentFailed = defineEvent('payment.failed.v1', PaymentFailedSchema)
export type PaymentFailed = z.infer<typeof PaymentFailedSchema>

/**
 * A capture was refunded in full because a later step failed (compensation). `reason` is the
 * failure that caused it, e.g. `out_of_stock`, `unsupported_country`.
 */
export const PaymentRefundedSchema = z.object({
  orderId: Id,
  paymentId: Id,
  refundId: Id,
  amount: MinorUnits,
  currency: Currency,
  reason: ReasonCode,
  refundedAt: Instant,
})
export const PaymentRefunded = defineEvent('payment.refunded.v1', PaymentRefundedSchema)
export type PaymentRefunded = z.infer<typeof PaymentRefundedSchema>
