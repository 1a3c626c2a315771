import { Id } from '@saga/contracts'
import { errorResponses } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { PrismaClient } from '../generated/prisma/client.js'

const ShipmentsQuery = z.strictObject({ orderId: Id.describe('The order whose shipments to list') })
const ShipmentView = z.object({
  id: z.uuid(),
  orderId: z.uuid(),
  status: z.enum(['CREATED']),
  carrier: z.string(),
  trackingNumber: z.string(),
  country: z.string().describe('ISO 3166-1 alpha-2 destination country'),
  createdAt: z.iso.datetime({ offset: true }),
})
const ShipmentList = z.object({ items: z.array(ShipmentView) })

/** Options of the shipment routes: the service's Prisma client. */
export interface ShipmentRoutesOptions {
  prisma: PrismaClient
}

/**
 * `GET /shipments?orderId=<uuid>`: `{ items: [{ id, orderId, status, carrier, trackingNumber,
 * country, createdAt }] }`, empty when the order has none (refused, or not reached shipment yet).
 */
export const shipmentRoutes: FastifyPluginCallbackZod<ShipmentRoutesOptions> = (app, { prisma }, done) => {
  app.get(
    '/shipments',
    {
      schema: {
        summary: "List an order's shipments",
        querystring: ShipmentsQuery,
        response: { 200: ShipmentList, ...errorResponses(400, 500, 503) },
      },
    },
    async (request) => {
      const shipments = await prisma.shipment.findMany({
        where: { orderId: request.query.orderId },
        orderBy: { createdAt: 'asc' },
        select: {
          id: true,
          orderId: true,
          status: true,
          carrier: true,
          trackingNumber: true,
          country: true,
          createdAt: true,
        },
      })
      return { items: shipments.map((s) => ({ ...s, createdAt: s.createdAt.toISOString() })) }
    },
  )
  done()
}
