import {
  brokerCheck,
  createServiceApp,
  databaseCheck,
  healthPlugin,
  metricsPlugin,
  outboxCheck,
  type ServiceAppOptions,
} from '@saga/service-kit'
import type { Config } from './config.js'
import { dbPlugin } from './plugins/db.js'
import { messagingPlugin } from './plugins/messaging.js'
import { orderReactions, timelineRecorder } from './reactions/index.js'
import { orderRoutes } from './routes/orders.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`). */
export interface BuildAppOptions {
  fastify?: ServiceAppOptions['fastify']
}

/**
 * The order service as a fastify app, registered in load order: database (and migrations),
 * messaging (relay + consumers), health, metrics, then the routes. Tests build it and `inject`.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}) {
  const app = await createServiceApp({
    service: 'order',
    logLevel: config.LOG_LEVEL,
    fastify: options.fastify,
  })
  await app.register(dbPlugin, { config })
  await app.register(messagingPlugin, {
    config,
    handlers: orderReactions({ logger: app.log }),
    recorders: [timelineRecorder({ logger: app.log })],
  })
  await app.register(healthPlugin, {
    checks: [
      databaseCheck(app.pool),
      brokerCheck(app.messaging),
      outboxCheck(app.messaging, config.READY_MAX_OUTBOX_AGE_MS),
    ],
  })
  await app.register(metricsPlugin, { service: 'order', messaging: app.messaging })
  await app.register(orderRoutes, { db: app.prisma, transactor: app.messaging })
  return app
}
