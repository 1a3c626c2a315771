import { sagaApp } from '@saga/service-kit'
import { seedCatalogue } from './catalogue.js'
import type { Config } from './config.js'
import { database } from './plugins/db.js'
import { inventoryReactions } from './reactions/index.js'
import { stockRoutes } from './routes/stock.js'

/**
 * The inventory service as a fastify app, `buildApp(config, { fastify }?)` (`sagaApp`: database,
 * overload, messaging, health, metrics in load order), with the demo catalogue seeded before messaging
 * starts when SEED_CATALOGUE, its reactions, and its routes last. Tests build it and `inject`.
 */
export const buildApp = sagaApp((config: Config) => ({
  service: 'inventory',
  database,
  beforeMessaging: async (app) => {
    if (!config.SEED_CATALOGUE) return
    const inserted = await seedCatalogue(app.prisma)
    app.log.info({ inserted }, 'demo catalogue seeded (existing skus kept)')
  },
  reactions: inventoryReactions,
  routes: async (app) => {
    await app.register(stockRoutes, { db: app.prisma })
  },
}))
