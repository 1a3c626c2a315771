import { errorResponses } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import type { PrismaClient } from '../generated/prisma/client.js'
import { ShipmentList, ShipmentsQuery } from '../schemas.js'

/** Options of the shipment routes: the service's Prisma client. */
export interface ShipmentRoutesOptions {
  db: PrismaClient
}

/**
 * `GET /shipments?orderId=<uuid>`: `{ items: [{ id, orderId, status, carrier, trackingNumber,
 * country, createdAt, cancelledAt, cancelReason }] }` (status CREATED or CANCELLED), empty when the order has none (refused, or not reached shipment yet).
 */
export const shipmentRoutes: FastifyPluginCallbackZod<ShipmentRoutesOptions> = (app, { db }, done) => {
  app.get(
    '/shipments',
    {
      schema: {
        operationId: 'listShipments',
        summary: "List an order's shipments",
        querystring: ShipmentsQuery,
        response: { 200: ShipmentList.describe("The order's shipments"), ...errorResponses(400, 500, 503) },
      },
    },
    async (request) => {
      const shipments = await db.shipment.findMany({
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
          cancelledAt: true,
          cancelReason: true,
        },
      })
      return {
        items: shipments.map((s) => ({
          ...s,
          createdAt: s.createdAt.toISOString(),
          cancelledAt: s.cancelledAt?.toISOString() ?? null,
        })),
      }
    },
  )
  done()
}
