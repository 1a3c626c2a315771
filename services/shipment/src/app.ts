import { fileURLToPath } from 'node:url'
import { pgDatabase } from '@saga/messaging'
import { messagingPlugin } from '@saga/messaging/fastify'
import {
  createServiceApp,
  databaseCheck,
  healthPlugin,
  messagingChecks,
  messagingOptions,
  metricsPlugin,
  overloadOptions,
  overloadPlugin,
  schemaCheck,
  type ServiceAppOptions,
} from '@saga/service-kit'
import type { Config } from './config.js'
import { dbPlugin } from './plugins/db.js'
import './plugins/messaging.js'
import { shipmentReactions } from './reactions/index.js'
import { shipmentRoutes } from './routes/shipments.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`). */
export interface BuildAppOptions {
  fastify?: ServiceAppOptions['fastify']
}

/**
 * The shipment service as a fastify app, registered in load order: database (and migrations),
 * messaging (relay + consumers), health, metrics, then the routes. Tests build it and `inject`.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}) {
  const app = await createServiceApp({
    service: 'shipment',
    logLevel: config.LOG_LEVEL,
    logFormat: config.LOG_FORMAT,
    fastify: options.fastify,
  })
  await app.register(dbPlugin, { config })
  // Before the routes: an overloaded instance sheds writes with 503 + Retry-After (README, "Overload").
  await app.register(overloadPlugin, overloadOptions(config, app.pool))
  const deps = { logger: app.log, clock: () => new Date() }
  await app.register(
    messagingPlugin,
    messagingOptions(config, {
      service: 'shipment',
      database: pgDatabase(app.pool),
      pool: app.pool,
      handlers: shipmentReactions(deps, config.CARRIER_ACCOUNT),
    }),
  )
  await app.register(healthPlugin, {
    checks: [
      databaseCheck(app.pool),
      // Not ready against a schema older than this build (the migrate step has not run yet).
      schemaCheck(app.pool, fileURLToPath(new URL('../prisma/migrations', import.meta.url))),
      ...messagingChecks(app.messaging),
    ],
  })
  await app.register(metricsPlugin, { service: 'shipment', metrics: app.messaging.metrics })
  await app.register(shipmentRoutes, { db: app.prisma })
  return app
}
