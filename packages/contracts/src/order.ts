/** Events the order service produces. */
import { z } from 'zod'
import { defineEvent } from './define.js'
import {
  Currency,
  Id,
  Instant,
  lineTotal,
  MinorUnits,
  OrderLines,
  PaymentMethod,
  ReasonCode,
  ShippingAddress,
} from './values.js'

/**
 * An order was accepted and is PENDING. Carries everything the rest of the chain needs: payment
 * charges `totalAmount` with `paymentMethod`, inventory reserves `lines`, shipment ships to
 * `shippingAddress`. `totalAmount` always equals the sum of quantity x unitPrice.
 */
export const OrderCreatedSchema = z
  .object({
    orderId: Id,
    customerId: Id,
    currency: Currency,
    lines: OrderLines,
    totalAmount: MinorUnits,
    shippingAddress: ShippingAddress,
    paymentMethod: PaymentMethod,
    createdAt: Instant,
  })
  .refine((order) => order.totalAmount === lineTotal(order.lines), {
    error: 'must equal the sum of quantity x unitPrice over the lines',
    path: ['totalAmount'],
    // Only meaningful once the lines themselves are valid; otherwise it would add a second, misleading issue.
    when: (payload) => payload.issues.length === 0,
  })
export const OrderCreated = defineEvent('order.created.v1', OrderCreatedSchema)
export type OrderCreated = z.infer<typeof OrderCreatedSchema>

/** The order went through: paid, stock reserved, shipment created. Terminal. */
export const OrderConfirmedSchema = z.object({
  orderId: Id,
  customerId: Id,
  totalAmount: MinorUnits,
  currency: Currency,
  shipmentId: Id,
  confirmedAt: Instant,
})
export const OrderConfirmed = defineEvent('order.confirmed.v1', OrderConfirmedSchema)
export type OrderConfirmed = z.infer<typeof OrderConfirmedSchema>

/** Which step of the chain failed and made the order cancel. */
export const FailedStep = z.enum(['payment', 'stock', 'shipment'])
export type FailedStep = z.infer<typeof FailedStep>

/**
 * Why an order was cancelled by the order service itself rather than by a failing step: its deadline
 * passed while it was PENDING (`deadline_exceeded`), the customer asked (`customer_requested`,
 * `POST /orders/:id/cancel`), or an operator did (`operator_requested`, `POST /admin/orders/:id/cancel`,
 * who is in the service's recorded admin actions). A step's failure keeps that step's own reason code.
 */
export const CancelReason = z.enum(['deadline_exceeded', 'customer_requested', 'operator_requested'])
export type CancelReason = z.infer<typeof CancelReason>

/**
 * The order was cancelled. Terminal. `reason` is the failing step's reason code (e.g.
 * `card_declined`, `out_of_stock`, `unsupported_country`), or a {@link CancelReason}.
 * `failedStep` names the step that failed, or, for `deadline_exceeded`, the step the order was still
 * waiting for; it is absent when the customer or an operator cancelled. Every service that did something for the
 * order undoes it when it sees this fact (refund, release, cancel the shipment); a service that has
 * not seen the order yet remembers the cancellation and does nothing for it later
 * (docs/architecture.md, "Cancellation and late facts").
 *
 * Compatibility: `failedStep` was required before customer cancellation existed; it is optional from
 * then on within `order.cancelled.v1`, because every consumer of it is in this repository.
 */
export const OrderCancelledSchema = z.object({
  orderId: Id,
  customerId: Id,
  reason: ReasonCode,
  failedStep: FailedStep.optional(),
  cancelledAt: Instant,
})
export const OrderCancelled = defineEvent('order.cancelled.v1', OrderCancelledSchema)
export type OrderCancelled = z.infer<typeof OrderCancelledSchema>
