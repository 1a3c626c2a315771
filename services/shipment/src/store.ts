/**
 * The shipment service's SQL for its reaction, written against the service's transaction (`Tx`, a
 * pg client inside BEGIN: no Prisma on the per-message path), so the reaction reads
 * load -> decide -> save -> enqueue -> log. Named statements: pg prepares each once per connection.
 */
import { cancellationRegister, stepStateQuery } from '@saga/cancellations'
import type { ShippingAddress } from '@saga/contracts'
import type { Tx } from './plugins/db.js'

/**
 * This service's cancellation register (`cancellationRegister` of @saga/cancellations, table
 * `cancelled_order`): booking and cancelling take the order's lock first, so of a StockReserved and
 * an OrderCancelled handled at the same moment one waits for the other: a shipment committed just
 * before the cancel is cancelled, a cancel committed just before the booking stops it.
 */
export const cancellations = cancellationRegister('shipment')

/**
 * What this service already knows of the order (`stepStateQuery`): whether it has a shipment (one per
 * order, in any status) and whether it is cancelled. One round trip.
 */
export const orderState = stepStateQuery('shipment', 'shipment')

/**
 * Cancels the order's CREATED shipment (status CANCELLED, `at`, `reason`) and returns its id;
 * undefined when it has none or it is cancelled already, so a shipment is cancelled at most once.
 */
export async function cancelShipment(
  tx: Tx,
  orderId: string,
  reason: string,
  at: Date,
): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>({
    name: 'shipment.cancel-shipment',
    text: `UPDATE shipment SET status = 'CANCELLED', cancelled_at = $2, cancel_reason = $3
      WHERE order_id = $1::uuid AND status = 'CREATED' RETURNING id::text`,
    values: [orderId, at, reason],
  })
  return rows[0]?.id
}

/** A booked shipment as stored. */
export interface NewShipment {
  id: string
  orderId: string
  carrier: string
  carrierAccount: string
  trackingNumber: string
  address: ShippingAddress
  createdAt: Date
}

/** Stores a booked shipment (status CREATED). */
export async function saveShipment(tx: Tx, shipment: NewShipment): Promise<void> {
  await tx.query({
    name: 'shipment.save-shipment',
    text: `INSERT INTO shipment (id, order_id, carrier, carrier_account, tracking_number, country, address, created_at)
      VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7::jsonb, $8)`,
    values: [
      shipment.id,
      shipment.orderId,
      shipment.carrier,
      shipment.carrierAccount,
      shipment.trackingNumber,
      shipment.address.country,
      JSON.stringify(shipment.address),
      shipment.createdAt,
    ],
  })
}
