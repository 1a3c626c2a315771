/**
 * The HTTP shapes of the inventory API, in zod: they validate requests, serialise responses and make
 * the OpenAPI document.
 */
import { Sku } from '@saga/contracts'
import { z } from 'zod'

/** Highest settable stock of one sku: far above any shop, far below PostgreSQL's int4 limit. */
export const MAX_AVAILABLE = 1_000_000_000

export const StockParams = z.object({ sku: Sku.describe('Stock-keeping unit, e.g. MUG-001') })
export const SetStockBody = z
  .strictObject({
    available: z
      .int()
      .min(0)
      .max(MAX_AVAILABLE)
      .describe('Units free to reserve (replaces the current value)'),
  })
  .meta({ id: 'SetStockRequest' })
export const StockView = z
  .object({
    sku: z.string(),
    available: z.int().describe('Units free to reserve'),
    reserved: z.int().describe('Units held by reservations of orders'),
  })
  .meta({ id: 'Stock' })
export type StockView = z.infer<typeof StockView>
