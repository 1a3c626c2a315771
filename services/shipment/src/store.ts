/**
 * The shipment service's SQL for its reaction, written against the service's transaction (`Tx`, a
 * pg client inside BEGIN: no Prisma on the per-message path), so the reaction reads
 * load -> decide -> save -> enqueue -> log. Named statements: pg prepares each once per connection.
 */
import type { ShippingAddress } from '@saga/contracts'
import type { Tx } from './plugins/db.js'

/** Whether the order already has a shipment (one shipment per order). */
export async function hasShipment(tx: Tx, orderId: string): Promise<boolean> {
  const { rowCount } = await tx.query({
    name: 'shipment.has-shipment',
    text: 'SELECT 1 FROM shipment WHERE order_id = $1::uuid LIMIT 1',
    values: [orderId],
  })
  return (rowCount ?? 0) > 0
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
