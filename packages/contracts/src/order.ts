/** Events the order service produces. */
import { z } from 'zod'
import { defineEvent, type EventUpcaster } from './define.js'
import {
  Currency,
  Id,
  Instant,
  lineTotal,
  MinorUnits,
  Money,
  OrderLines,
  PaymentMethod,
  ReasonCode,
  ShippingAddress,
} from './values.js'

/**
 * An order was accepted and is PENDING (`order.created.v1`). Carries everything the rest of the chain
 * needs: payment charges `totalAmount` with `paymentMethod`, inventory reserves `lines`, shipment
 * ships to `shippingAddress`. `totalAmount` always equals the sum of quantity x unitPrice.
 * Superseded by {@link OrderCreatedV2Schema} (money as one `total` value); published while a
 * consumer still reads only v1 (the order service's ORDER_CREATED_VERSION).
 */
export const OrderCreatedV1Schema = z
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
export const OrderCreatedV1 = defineEvent('order.created.v1', OrderCreatedV1Schema)
export type OrderCreatedV1 = z.infer<typeof OrderCreatedV1Schema>

/**
 * An order was accepted and is PENDING (`order.created.v2`): v1's facts with the money as one value,
 * `total: { amount, currency }` (`Money`, minor units), instead of `totalAmount` beside `currency`.
 * `total.amount` always equals the sum of quantity x unitPrice, in `total.currency`.
 */
export const OrderCreatedV2Schema = z
  .object({
    orderId: Id,
    customerId: Id,
    total: Money,
    lines: OrderLines,
    shippingAddress: ShippingAddress,
    paymentMethod: PaymentMethod,
    createdAt: Instant,
  })
  .refine((order) => order.total.amount === lineTotal(order.lines), {
    error: 'must equal the sum of quantity x unitPrice over the lines',
    path: ['total', 'amount'],
    when: (payload) => payload.issues.length === 0,
  })
export const OrderCreatedV2 = defineEvent('order.created.v2', OrderCreatedV2Schema)
export type OrderCreatedV2 = z.infer<typeof OrderCreatedV2Schema>

/**
 * The version of OrderCreated the fleet's consumers read today: v1. An alias, so code naming
 * `OrderCreated` moves to v2 in one place once every consumer reads v2.
 */
export const OrderCreatedSchema = OrderCreatedV1Schema
export const OrderCreated = OrderCreatedV1
export type OrderCreated = OrderCreatedV1

/**
 * A v1 payload as v2: `currency` and `totalAmount` become `total: { amount, currency }`; every other
 * field is carried over as it is. Pure; the input is not changed.
 */
export const upcastOrderCreatedV1toV2 = (v1: OrderCreatedV1): OrderCreatedV2 => ({
  orderId: v1.orderId,
  customerId: v1.customerId,
  total: { amount: v1.totalAmount, currency: v1.currency },
  lines: v1.lines,
  shippingAddress: v1.shippingAddress,
  paymentMethod: v1.paymentMethod,
  createdAt: v1.createdAt,
})

/**
 * A v2 payload as v1, with v1's keys in v1's order (orderId, customerId, currency, lines,
 * totalAmount, shippingAddress, paymentMethod, createdAt), so a producer on a v2 build that publishes
 * v1 writes the very JSON text a v1 build wrote. `downcastOrderCreatedV2toV1(upcastOrderCreatedV1toV2(x))`
 * is `x` for every v1 payload. Pure; the input is not changed.
 */
export const downcastOrderCreatedV2toV1 = (v2: OrderCreatedV2): OrderCreatedV1 => ({
  orderId: v2.orderId,
  customerId: v2.customerId,
  currency: v2.total.currency,
  lines: v2.lines,
  totalAmount: v2.total.amount,
  shippingAddress: v2.shippingAddress,
  paymentMethod: v2.paymentMethod,
  createdAt: v2.createdAt,
})

/**
 * How a consumer of `order.created.v2` reads `order.created.v1`: in the saga map,
 * `alsoReads: [OrderCreatedV1toV2]`; in a handler of @saga/messaging, `upcasts: [OrderCreatedV1toV2]`.
 */
export const OrderCreatedV1toV2: EventUpcaster<OrderCreatedV2, OrderCreatedV1> = {
  from: OrderCreatedV1,
  upcast: upcastOrderCreatedV1toV2,
}

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
