import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { databasePlugin } from '@saga/service-kit'
import type pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.js'

/**
 * What reactions, POST /orders, the customer's cancel and the deadline scheduler write in: a pooled
 * pg client inside BEGIN (`pgDatabase(app.pool)`, opened by `messaging.transaction`), so the write
 * path runs without Prisma (one pg call per statement, named statements prepared once per
 * connection). Routes read through Prisma.
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
 * The order service's database (see `databasePlugin`): pg Pool, migrations from prisma/migrations when
 * MIGRATE_ON_START, Prisma 7 over the pool through @prisma/adapter-pg. Options: `{ config }`.
 */
export const dbPlugin = databasePlugin({
  service: 'order',
  // From src/plugins or dist/plugins alike, the service's prisma/migrations.
  migrationsDir: fileURLToPath(new URL('../../prisma/migrations', import.meta.url)),
  createClient: (pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
})
