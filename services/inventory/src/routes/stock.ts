import { Sku } from '@saga/contracts'
import { errorResponses, HttpError } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { PrismaClient } from '../generated/prisma/client.js'

/** Highest settable stock of one sku: far above any shop, far below PostgreSQL's int4 limit. */
export const MAX_AVAILABLE = 1_000_000_000

const StockParams = z.object({ sku: Sku.describe('Stock-keeping unit, e.g. MUG-001') })
const SetStockBody = z.strictObject({
  available: z.int().min(0).max(MAX_AVAILABLE).describe('Units free to reserve (replaces the current value)'),
})
const StockView = z.object({
  sku: z.string(),
  available: z.int().describe('Units free to reserve'),
  reserved: z.int().describe('Units held by reservations of orders'),
})
type StockView = z.infer<typeof StockView>

/** Options of the stock routes: the service's Prisma client. */
export interface StockRoutesOptions {
  prisma: PrismaClient
}

/**
 * `PUT /stock/:sku` `{ available }` sets the free units of a sku (creating it; `reserved` is kept),
 * `GET /stock/:sku` reads `{ sku, available, reserved }` (404 for an unknown sku). For operators and
 * tests; reservations change stock only through the saga.
 */
export const stockRoutes: FastifyPluginCallbackZod<StockRoutesOptions> = (app, { prisma }, done) => {
  app.put(
    '/stock/:sku',
    {
      schema: {
        summary: 'Set the available units of a sku',
        params: StockParams,
        body: SetStockBody,
        response: { 200: StockView, ...errorResponses(400, 413, 415, 500, 503) },
      },
    },
    async (request) => {
      const { sku } = request.params
      // One statement, so two operators setting the same sku never collide on the insert.
      const rows = await prisma.$queryRaw<StockView[]>`
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
        summary: 'Read the available and reserved units of a sku',
        params: StockParams,
        response: { 200: StockView, ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request) => {
      const stock = await prisma.stock.findUnique({
        where: { sku: request.params.sku },
        select: { sku: true, available: true, reserved: true },
      })
      if (stock === null) throw new HttpError(404, `sku ${request.params.sku} not found`)
      return stock
    },
  )
  done()
}
