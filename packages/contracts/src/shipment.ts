/** Events the shipment service produces. */
import { z } from 'zod'
import { defineEvent } from './define.js'
import { Country, Id, Instant, OrderLines, ReasonCode, text } from './values.js'

/** The carrier accepted the shipment. */
export const ShipmentCreatedSchema = z.object({
  orderId: Id,
  shipmentId: Id,
  carrier: text(64),
  trackingNumber: text(64),
  createdAt: Instant,
})
export const ShipmentCreated = defineEvent('shipment.created.v1', ShipmentCreatedSchema)
export type ShipmentCreated = z.infer<typeof ShipmentCreatedSchema>

/**
 * The carrier refused the shipment; nothing was shipped. `reason` e.g. `unsupported_country`.
 * Carries the lines so inventory can release exactly what it reserved for the order.
 */
export const ShipmentFailedSchema = z.object({
  orderId: Id,
  reason: ReasonCode,
  /** The destination country when the carrier refused it for that country. */
  country: Country.optional(),
  lines: OrderLines,
  failedAt: Instant,
})
export const ShipmentFailed = defineEvent('shipment.failed.v1', ShipmentFailedSchema)
export type ShipmentFailed = z.infer<typeof ShipmentFailedSchema>

/**
 * A created shipment was cancelled before it left, because its order was cancelled (a deadline or
 * the customer won the race against the chain). `reason` is the order's cancellation reason.
 */
export const ShipmentCancelledSchema = z.object({
  orderId: Id,
  shipmentId: Id,
  reason: ReasonCode,
  cancelledAt: Instant,
})
export const ShipmentCancelled = defineEvent('shipment.cancelled.v1', ShipmentCancelledSchema)
export type ShipmentCancelled = z.infer<typeof ShipmentCancelledSchema>
