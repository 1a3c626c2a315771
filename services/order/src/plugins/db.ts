import { serviceDatabase } from '@saga/service-kit'
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
 * The order service's database for `sagaService` (its prisma/migrations folder, Prisma 7 over the pool
 * through @prisma/adapter-pg) and its `db` plugin alone, for tests of the database (`serviceDatabase`).
 */
export const { database, dbPlugin } = serviceDatabase('order', PrismaClient, import.meta.url)
