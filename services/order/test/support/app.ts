import { pgDatabase } from '@saga/messaging'
import type { ServiceApp } from '@saga/service-kit'
import { useRouteApp } from '@saga/service-kit/testing'
import { createOrder } from '../../src/routes/create-order.js'
import { orderRoutes, type OrderRoutesOptions } from '../../src/routes/orders.js'
import { orderBody, type OrderTestDatabase } from './orders.js'

/**
 * The order routes on the fleet's app defaults (error handler, zod, OpenAPI), writing through
 * messaging's pg transaction adapter on `db`, without a broker: route tests assert the outbox rows.
 * A fixture of the enclosing `describe` (or file), set up after `db`'s and closed after its tests
 * (service-kit's `useRouteApp`); returns the app's stand-in.
 */
export function useOrderRouteApp(
  db: OrderTestDatabase,
  options: Omit<OrderRoutesOptions, 'db' | 'database' | 'clock'> = {},
): ServiceApp {
  return useRouteApp('order', (app) =>
    app.register(orderRoutes, {
      ...options,
      db: db.prisma,
      database: pgDatabase(db.pool),
      clock: () => new Date(),
    }),
  )
}

/** A PENDING order created the way POST /orders creates it (deadline `deadlineMs` away); returns its id. */
export async function pendingOrder(db: OrderTestDatabase, deadlineMs?: number): Promise<string> {
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
