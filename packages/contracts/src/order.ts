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
export const OrderCreated = defineEvent(
  'OrderCreated',
  'order.created.v1',
  'order.created',
  OrderCreatedSchema,
)
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
export const OrderConfirmed = defineEvent(
  'OrderConfirmed',
  'order.confirmed.v1',
  'order.confirmed',
  OrderConfirmedSchema,
)
export type OrderConfirmed = z.infer<typeof OrderConfirmedSchema>

/** Which step of the chain failed and made the order cancel. */
export const FailedStep = z.enum(['payment', 'stock', 'shipment'])
export type FailedStep = z.infer<typeof FailedStep>

/**
 * The order was cancelled because a step failed. Terminal. `reason` is the failing step's reason
 * code (e.g. `card_declined`, `out_of_stock`, `unsupported_country`).
 */
export const OrderCancelledSchema = z.object({
  orderId: Id,
  customerId: Id,
  reason: ReasonCode,
  failedStep: FailedStep,
  cancelledAt: Instant,
})
export const OrderCancelled = defineEvent(
  'OrderCancelled',
  'order.cancelled.v1',
  'order.cancelled',
  OrderCancelledSchema,
)
export type OrderCancelled = z.infer<typeof OrderCancelledSchema>
