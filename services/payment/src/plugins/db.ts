import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import { runMigrations } from '@saga/service-kit'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import pg from 'pg'
import type { Config } from '../config.js'
import { PrismaClient, type Prisma } from '../generated/prisma/client.js'

/** A Prisma interactive-transaction client: what reactions and routes write in. */
export type Tx = Prisma.TransactionClient

declare module 'fastify' {
  interface FastifyInstance {
    prisma: PrismaClient
    /** The pg pool under Prisma; messaging uses it too (relay claims, LISTEN, retention). */
    pool: pg.Pool
  }
}

// From src/plugins or dist/plugins alike, the service's prisma/migrations.
const migrationsDir = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/**
 * The service's database: a pg Pool on DATABASE_URL, migrations applied when MIGRATE_ON_START
 * (a failed migration fails the start), and Prisma 7 over the pool through @prisma/adapter-pg.
 * Decorates `app.prisma` and `app.pool`; both are closed on app close.
 */
export const dbPlugin = fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const pool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: config.DATABASE_POOL_MAX,
      // A database that is down must fail a request (and the readiness check) quickly, not hang it.
      connectionTimeoutMillis: 5_000,
      application_name: 'payment-service',
    })
    // An idle client dies when PostgreSQL restarts; the pool replaces it. Unhandled, it would crash us.
    pool.on('error', (err) => app.log.warn({ err }, 'idle database connection lost'))
    try {
      if (config.MIGRATE_ON_START) await runMigrations({ pool, migrationsDir, logger: app.log })
    } catch (error) {
      await pool.end()
      throw error
    }
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) })
    app.decorate('pool', pool)
    app.decorate('prisma', prisma)
    app.addHook('onClose', async () => {
      await prisma.$disconnect()
      await pool.end()
    })
  },
  { name: 'db', fastify: '5.x' },
)
