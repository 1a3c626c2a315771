/** Events the inventory service produces. */
import { z } from 'zod'
import { defineEvent } from './define.js'
import { Id, Instant, OrderLines, Quantity, ReasonCode, ShippingAddress, Sku } from './values.js'

/** Every line of the order was reserved. Carries lines and address on to shipment. */
export const StockReservedSchema = z.object({
  orderId: Id,
  customerId: Id,
  lines: OrderLines,
  shippingAddress: ShippingAddress,
  reservedAt: Instant,
})
export const StockReserved = defineEvent('stock.reserved.v1', StockReservedSchema)
export type StockReserved = z.infer<typeof StockReservedSchema>

/** A line that could not be reserved: how many were asked for and how many were available. */
export const UnavailableLine = z.object({
  sku: Sku,
  requested: Quantity,
  available: z.int().min(0),
})
export type UnavailableLine = z.infer<typeof UnavailableLine>

/**
 * Nothing was reserved because at least one line could not be (all or nothing). `reason` e.g.
 * `out_of_stock`, `unknown_sku`; `unavailable` lists the lines that failed.
 */
export const StockReservationFailedSchema = z.object({
  orderId: Id,
  customerId: Id,
  reason: ReasonCode,
  unavailable: z.array(UnavailableLine),
  failedAt: Instant,
})
export const StockReservationFailed = defineEvent('stock.reservation-failed.v1', StockReservationFailedSchema)
export type StockReservationFailed = z.infer<typeof StockReservationFailedSchema>

/** A reservation was given back because a later step failed (compensation). */
export const StockReleasedSchema = z.object({
  orderId: Id,
  lines: OrderLines,
  reason: ReasonCode,
  releasedAt: Instant,
})
export const StockReleased = defineEvent('stock.released.v1', StockReleasedSchema)
export type StockReleased = z.infer<typeof StockReleasedSchema>
