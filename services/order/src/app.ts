import { sagaService, type SagaAppOptions } from '@saga/service-kit'
import type { Config } from './config.js'
import { createOrderMetrics } from './metrics.js'
import { database } from './plugins/db.js'
import { deadlinesPlugin } from './plugins/deadlines.js'
import { orderReactions, timelineRecorder } from './reactions/index.js'
import { adminBulkCancelRoutes } from './routes/admin-bulk-cancel.js'
import { adminOrderRoutes } from './routes/admin-cancel.js'
import { asyncApiRoute } from './routes/asyncapi.js'
import { orderRoutes } from './routes/orders.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`), and the deadline scheduler's timings. */
export interface BuildAppOptions extends SagaAppOptions {
  deadlines?: { maxSleepMs?: number; retryMs?: number; batchSize?: number } | undefined
}

/**
 * The order service as a fastify app (`sagaService`: database, overload, messaging, health, metrics
 * in load order), with its reactions and timeline recorder, the deadline scheduler after messaging
 * (it writes through messaging's transactions), its own metrics on `/metrics`, then the routes and
 * the AsyncAPI document. Tests build it and `inject`.
 */
export function buildApp(config: Config, options: BuildAppOptions = {}) {
  const metrics = createOrderMetrics()
  return sagaService({
    service: 'order',
    config,
    fastify: options.fastify,
    database,
    deps: { metrics },
    reactions: orderReactions,
    recorders: (deps) => [timelineRecorder(deps)],
    afterMessaging: async (app) => {
      await app.register(deadlinesPlugin, { ...options.deadlines, metrics })
    },
    routes: async (app, deps) => {
      metrics.register(app.metricsRegistry)
      await app.register(orderRoutes, {
        db: app.prisma,
        database: app.messaging,
        clock: deps.clock,
        deadlineMs: config.ORDER_DEADLINE_MS,
        orderCreatedVersion: config.ORDER_CREATED_VERSION,
        onDeadline: (inMs) => app.deadlines.noteDeadline(inMs),
        metrics,
      })
      const admin = { database: app.messaging, clock: deps.clock, metrics, adminToken: config.ADMIN_TOKEN }
      await app.register(adminOrderRoutes, admin)
      await app.register(adminBulkCancelRoutes, admin)
      await app.register(asyncApiRoute)
    },
  })
}
