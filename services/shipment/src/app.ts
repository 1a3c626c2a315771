import { sagaService, type ServiceAppOptions } from '@saga/service-kit'
import type { Config } from './config.js'
import { database } from './plugins/db.js'
import { shipmentReactions } from './reactions/index.js'
import { shipmentRoutes } from './routes/shipments.js'

/** Test hooks: fastify options (e.g. `{ logger: false }`). */
export interface BuildAppOptions {
  fastify?: ServiceAppOptions['fastify']
}

/**
 * The shipment service as a fastify app (`sagaService`: database, overload, messaging, health, metrics
 * in load order), with its reactions (booking on CARRIER_ACCOUNT) and its routes last. Tests build it
 * and `inject`.
 */
export function buildApp(config: Config, options: BuildAppOptions = {}) {
  return sagaService({
    service: 'shipment',
    config,
    fastify: options.fastify,
    database,
    reactions: (deps) => shipmentReactions(deps, config.CARRIER_ACCOUNT),
    routes: async (app) => {
      await app.register(shipmentRoutes, { db: app.prisma })
    },
  })
}
