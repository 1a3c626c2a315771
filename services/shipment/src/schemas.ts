/**
 * The HTTP shapes of the shipment API, in zod: they validate requests, serialise responses and make
 * the OpenAPI document.
 */
import { Id } from '@saga/contracts'
import { z } from 'zod'

/** `GET /shipments` query: the order whose shipments to list. */
export const ShipmentsQuery = z.strictObject({ orderId: Id.describe('The order whose shipments to list') })
/** One shipment as the API shows it. */
export const ShipmentView = z
  .object({
    id: Id,
    orderId: Id,
    status: z
      .enum(['CREATED', 'CANCELLED'])
      .describe('CANCELLED: its order was cancelled before the parcel left'),
    carrier: z.string(),
    trackingNumber: z.string(),
    country: z.string().describe('ISO 3166-1 alpha-2 destination country'),
    createdAt: z.iso.datetime({ offset: true }),
    cancelledAt: z.iso.datetime({ offset: true }).nullable().describe('Set when status is CANCELLED'),
    cancelReason: z.string().nullable().describe("The order's cancellation reason, when status is CANCELLED"),
  })
  .meta({ id: 'Shipment' })
/** `GET /shipments` response. */
export const ShipmentList = z.object({ items: z.array(ShipmentView) }).meta({ id: 'ShipmentList' })
