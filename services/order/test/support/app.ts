import { pgDatabase } from '@saga/messaging'
import { createServiceApp } from '@saga/service-kit'
import { createOrder } from '../../src/routes/create-order.js'
import { orderRoutes, type OrderRoutesOptions } from '../../src/routes/orders.js'
import type { ServiceTestDatabase } from './database.js'
import { orderBody } from './orders.js'

/**
 * The order routes on the fleet's app defaults (error handler, zod, OpenAPI), writing through
 * messaging's Prisma transaction adapter, without a broker: route tests assert the outbox rows.
 */
export async function buildRouteApp(
  db: ServiceTestDatabase,
  options: Omit<OrderRoutesOptions, 'db' | 'database' | 'clock'> = {},
) {
  const app = await createServiceApp({ service: 'order', logLevel: 'silent', fastify: { logger: false } })
  await app.register(orderRoutes, {
    ...options,
    db: db.prisma,
    database: pgDatabase(db.pool),
    clock: () => new Date(),
  })
  await app.ready()
  return app
}

/** A PENDING order created the way POST /orders creates it (deadline `deadlineMs` away); returns its id. */
export async function pendingOrder(db: ServiceTestDatabase, deadlineMs?: number): Promise<string> {
  const result = await createOrder(
    { db: db.prisma, database: pgDatabase(db.pool), clock: () => new Date() },
    orderBody(),
    {
      deadlineMs,
    },
  )
  if (result.kind !== 'created') throw new Error('expected a new order')
  return result.order.id
}
