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
import { paymentReactions } from './reactions/index.js'
import { paymentRoutes } from './routes/payments.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`). */
export interface BuildAppOptions {
  fastify?: ServiceAppOptions['fastify']
}

/**
 * The payment service as a fastify app, registered in load order: database (and migrations),
 * messaging (relay + consumers), health, metrics, then the routes. Tests build it and `inject`.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}) {
  const app = await createServiceApp({
    service: 'payment',
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
      service: 'payment',
      database: pgDatabase(app.pool),
      pool: app.pool,
      handlers: paymentReactions(deps, { slowTokenDelayMs: config.PAYMENT_SLOW_TOKEN_DELAY_MS }),
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
  await app.register(metricsPlugin, { service: 'payment', metrics: app.messaging.metrics })
  await app.register(paymentRoutes, { db: app.prisma })
  return app
}
