import { sagaApp } from '@saga/service-kit'
import type { Config } from './config.js'
import { database } from './plugins/db.js'
import { paymentReactions } from './reactions/index.js'
import { paymentRoutes } from './routes/payments.js'

/**
 * The payment service as a fastify app, `buildApp(config, { fastify }?)` (`sagaApp`: database,
 * overload, messaging, health, metrics in load order), with its reactions (the simulated provider's
 * `tok_slow` delay from PAYMENT_SLOW_TOKEN_DELAY_MS) and its routes last. Tests build it and `inject`.
 */
export const buildApp = sagaApp((config: Config) => ({
  service: 'payment',
  database,
  reactions: (deps) => paymentReactions(deps, { slowTokenDelayMs: config.PAYMENT_SLOW_TOKEN_DELAY_MS }),
  routes: async (app) => {
    await app.register(paymentRoutes, { db: app.prisma })
  },
}))
