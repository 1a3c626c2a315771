import { errorResponses, HttpError } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import type { PrismaClient } from '../generated/prisma/client.js'
import { SetStockBody, StockParams, StockView } from '../schemas.js'

/** Options of the stock routes: the service's Prisma client. */
export interface StockRoutesOptions {
  db: PrismaClient
}

/**
 * `PUT /stock/:sku` `{ available }` sets the free units of a sku (creating it; `reserved` is kept),
 * `GET /stock/:sku` reads `{ sku, available, reserved }` (404 for an unknown sku). For operators and
 * tests; reservations change stock only through the saga.
 */
export const stockRoutes: FastifyPluginCallbackZod<StockRoutesOptions> = (app, { db }, done) => {
  app.put(
    '/stock/:sku',
    {
      schema: {
        operationId: 'setStock',
        summary: 'Set the available units of a sku',
        params: StockParams,
        body: SetStockBody,
        response: { 200: StockView.describe('The stock as set'), ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    async (request) => {
      const { sku } = request.params
      // One statement, so two operators setting the same sku never collide on the insert.
      const rows = await db.$queryRaw<StockView[]>`
        INSERT INTO stock (sku, available) VALUES (${sku}, ${request.body.available})
        ON CONFLICT (sku) DO UPDATE SET available = EXCLUDED.available, updated_at = now()
        RETURNING sku, available, reserved`
      request.log.info({ sku, available: request.body.available }, 'stock set')
      return rows[0]
    },
  )

  app.get(
    '/stock/:sku',
    {
      schema: {
        operationId: 'getStock',
        summary: 'Read the available and reserved units of a sku',
        params: StockParams,
        response: { 200: StockView.describe('The stock of the sku'), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request) => {
      const stock = await db.stock.findUnique({
        where: { sku: request.params.sku },
        select: { sku: true, available: true, reserved: true },
      })
      if (stock === null) throw new HttpError(404, `sku ${request.params.sku} not found`)
      return stock
    },
  )
  done()
}
