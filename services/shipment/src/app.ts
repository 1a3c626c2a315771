import { sagaApp } from '@saga/service-kit'
import type { Config } from './config.js'
import { database } from './plugins/db.js'
import { shipmentReactions } from './reactions/index.js'
import { shipmentRoutes } from './routes/shipments.js'

/**
 * The shipment service as a fastify app, `buildApp(config, { fastify }?)` (`sagaApp`: database,
 * overload, messaging, health, metrics in load order), with its reactions (booking on CARRIER_ACCOUNT)
 * and its routes last. Tests build it and `inject`.
 */
export const buildApp = sagaApp((config: Config) => ({
  service: 'shipment',
  database,
  reactions: (deps) => shipmentReactions(deps, config.CARRIER_ACCOUNT),
  routes: async (app) => {
    await app.register(shipmentRoutes, { db: app.prisma })
  },
}))
