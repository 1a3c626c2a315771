import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { databasePlugin, type SagaTransaction } from '@saga/service-kit'
import type pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.js'

/** What reactions write in (`SagaTransaction`): a pooled pg client inside BEGIN. Routes read through Prisma. */
export type Tx = SagaTransaction

declare module 'fastify' {
  interface FastifyInstance {
    /** The shipment service's Prisma client over `app.pool`. */
    prisma: PrismaClient
  }
}

/**
 * The shipment service's database for `sagaService` and `databasePlugin`: its prisma/migrations folder and
 * Prisma 7 over the pool through @prisma/adapter-pg.
 */
export const database = {
  // From src/plugins or dist/plugins alike, the service's prisma/migrations.
  migrationsDir: fileURLToPath(new URL('../../prisma/migrations', import.meta.url)),
  createClient: (pool: pg.Pool) => new PrismaClient({ adapter: new PrismaPg(pool) }),
}

/** The shipment service's `db` plugin alone (see `databasePlugin`), for tests of the database. Options: `{ config }`. */
export const dbPlugin = databasePlugin({ service: 'shipment', ...database })
