/**
 * The shipment service's SQL for its reaction, written against the service's transaction (`Tx`), so
 * the reaction reads load -> decide -> save -> enqueue -> log and a later move of the hot path off
 * Prisma touches this file only.
 */
import type { ShippingAddress } from '@saga/contracts'
import type { Tx } from './plugins/db.js'

/** Whether the order already has a shipment (one shipment per order). */
export async function hasShipment(tx: Tx, orderId: string): Promise<boolean> {
  return (await tx.shipment.count({ where: { orderId } })) > 0
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
  await tx.shipment.create({ data: { ...shipment, country: shipment.address.country } })
}
