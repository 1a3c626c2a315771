import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { databasePlugin } from '@saga/service-kit'
import type pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.js'

/**
 * What reactions write in: a pooled pg client inside BEGIN (`pgDatabase(app.pool)`), so the
 * per-message path (inbox INSERT, the reaction's statements, outbox INSERT) runs without Prisma.
 * Routes read through Prisma.
 */
export type Tx = pg.PoolClient

declare module 'fastify' {
  interface FastifyInstance {
    prisma: PrismaClient
    /** The pg pool under Prisma; messaging uses it too (relay claims, LISTEN, retention). */
    pool: pg.Pool
  }
}

/**
 * The payment service's database (see `databasePlugin`): pg Pool, migrations from prisma/migrations when
 * MIGRATE_ON_START, Prisma 7 over the pool through @prisma/adapter-pg. Options: `{ config }`.
 */
export const dbPlugin = databasePlugin({
  service: 'payment',
  // From src/plugins or dist/plugins alike, the service's prisma/migrations.
  migrationsDir: fileURLToPath(new URL('../../prisma/migrations', import.meta.url)),
  createClient: (pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
})
