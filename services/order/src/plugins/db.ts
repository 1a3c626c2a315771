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
    /** The order service's Prisma client over `app.pool`. */
    prisma: PrismaClient
  }
}

/**
 * The order service's database for `sagaService` and `databasePlugin`: its prisma/migrations folder and
 * Prisma 7 over the pool through @prisma/adapter-pg.
 */
export const database = {
  // From src/plugins or dist/plugins alike, the service's prisma/migrations.
  migrationsDir: fileURLToPath(new URL('../../prisma/migrations', import.meta.url)),
  createClient: (pool: pg.Pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
}

/** The order service's `db` plugin alone (see `databasePlugin`), for tests of the database. Options: `{ config }`. */
export const dbPlugin = databasePlugin({ service: 'order', ...database })
