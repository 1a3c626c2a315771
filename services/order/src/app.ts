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
import { createOrderMetrics } from './metrics.js'
import { dbPlugin } from './plugins/db.js'
import { deadlinesPlugin } from './plugins/deadlines.js'
import './plugins/messaging.js'
import { orderReactions, timelineRecorder } from './reactions/index.js'
import { asyncApiRoute } from './routes/asyncapi.js'
import { orderRoutes } from './routes/orders.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`), and the deadline scheduler's timings. */
export interface BuildAppOptions {
  fastify?: ServiceAppOptions['fastify']
  deadlines?: { maxSleepMs?: number; retryMs?: number; batchSize?: number } | undefined
}

/**
 * The order service as a fastify app, registered in load order: database (and migrations),
 * messaging (relay + consumers), the deadline scheduler, health, metrics, then the routes. Tests
 * build it and `inject`.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}) {
  const app = await createServiceApp({
    service: 'order',
    logLevel: config.LOG_LEVEL,
    logFormat: config.LOG_FORMAT,
    fastify: options.fastify,
  })
  await app.register(dbPlugin, { config })
  // Before the routes: an overloaded instance sheds writes with 503 + Retry-After (README, "Overload").
  await app.register(overloadPlugin, overloadOptions(config, app.pool))
  const metrics = createOrderMetrics()
  const deps = { logger: app.log, clock: () => new Date(), metrics }
  await app.register(
    messagingPlugin,
    messagingOptions(config, {
      service: 'order',
      database: pgDatabase(app.pool),
      pool: app.pool,
      handlers: orderReactions(deps),
      recorders: [timelineRecorder(deps)],
    }),
  )
  await app.register(deadlinesPlugin, { ...options.deadlines, metrics })
  await app.register(healthPlugin, {
    checks: [
      databaseCheck(app.pool),
      // Not ready against a schema older than this build (the migrate step has not run yet).
      schemaCheck(app.pool, fileURLToPath(new URL('../prisma/migrations', import.meta.url))),
      ...messagingChecks(app.messaging),
    ],
  })
  await app.register(metricsPlugin, { service: 'order', metrics: app.messaging.metrics })
  metrics.register(app.metricsRegistry)
  await app.register(orderRoutes, {
    db: app.prisma,
    database: app.messaging,
    clock: deps.clock,
    deadlineMs: config.ORDER_DEADLINE_MS,
    onDeadline: (inMs) => app.deadlines.noteDeadline(inMs),
    metrics,
  })
  await app.register(asyncApiRoute)
  return app
}
