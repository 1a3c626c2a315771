import { serviceDatabase, type SagaTransaction } from '@saga/service-kit'
import { PrismaClient } from '../generated/prisma/client.js'

/** What reactions write in (`SagaTransaction`): a pooled pg client inside BEGIN. Routes read through Prisma. */
export type Tx = SagaTransaction

declare module 'fastify' {
  interface FastifyInstance {
    /** The payment service's Prisma client over `app.pool`. */
    prisma: PrismaClient
  }
}

/**
 * The payment service's database for `sagaService` (its prisma/migrations folder, Prisma 7 over the pool
 * through @prisma/adapter-pg) and its `db` plugin alone, for tests of the database (`serviceDatabase`).
 */
export const { database, dbPlugin } = serviceDatabase('payment', PrismaClient, import.meta.url)
