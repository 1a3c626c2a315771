import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { databasePlugin } from '@saga/service-kit'
import type pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.js'

/** What reactions and POST /orders write in (see orders/types.ts): a pg client inside BEGIN. */
export type { Tx } from '../orders/types.js'

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
