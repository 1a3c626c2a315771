import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import pg from 'pg'
import { sessionConnection } from './database-session.js'
import type { BaseServiceConfig, ServiceName } from './env.js'
import { runMigrations } from './migrate.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The pg pool under the service's Prisma client (`databasePlugin`); messaging uses it too (relay claims, LISTEN, retention). */
    pool: pg.Pool
  }
}

/** A client's own 'error' listener: see the pool's 'connect' handler in `databasePlugin`. */
const ignoreClientError = (): void => undefined

/** The Prisma client surface the plugin needs: it only disconnects it on close. */
export interface DisconnectableClient {
  $disconnect(): Promise<void>
}

/** Options of `databasePlugin`. */
export interface DatabasePluginOptions<Client extends DisconnectableClient> {
  /** The service name; the pool connects as `application_name` `<service>-service`. */
  service: ServiceName
  /** The service's prisma/migrations folder (absolute path), applied when MIGRATE_ON_START. */
  migrationsDir: string
  /**
   * Makes the service's own Prisma client over the pool, e.g.
   * `(pool) => new PrismaClient({ adapter: new PrismaPg(pool) })` (what `serviceDatabase` gives from the
   * service's generated class), so this package needs no generated client.
   */
  createClient: (pool: pg.Pool) => Client
}

/**
 * A service's database as `sagaService`, `serviceDatabase` and the test fixtures of
 * `@saga/service-kit/testing` take it: `databasePlugin`'s options but the service name (its
 * prisma/migrations folder and its Prisma client factory).
 */
export type DatabaseDefinition<Client extends DisconnectableClient> = Omit<
  DatabasePluginOptions<Client>,
  'service'
>

/** What the plugin reads from the service's parsed config. */
export type DatabaseConfig = Pick<
  BaseServiceConfig,
  | 'DATABASE_URL'
  | 'DATABASE_POOL_MAX'
  | 'DATABASE_POOL_IDLE_TIMEOUT_MS'
  | 'DATABASE_STATEMENT_TIMEOUT_MS'
  | 'DATABASE_LOCK_TIMEOUT_MS'
  | 'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS'
  | 'MIGRATE_ON_START'
>

/**
 * Builds a service's `db` fastify plugin: a pg Pool on DATABASE_URL (max DATABASE_POOL_MAX, idle
 * connections closed after DATABASE_POOL_IDLE_TIMEOUT_MS, see `DEFAULT_POOL_IDLE_TIMEOUT_MS`) whose
 * connections run in UTC under the DATABASE_*_TIMEOUT_MS session limits (`sessionConnection`), migrations
 * applied when MIGRATE_ON_START (a failed migration ends the pool and fails the start), then the client
 * `createClient` makes over the pool. Decorates `app.pool` and `app.prisma` (the service declares the
 * latter's type, its own generated client); on app close the client disconnects and the pool ends.
 * @throws MigrationError (from `runMigrations`) when a migration fails, at registration
 */
export function databasePlugin<Client extends DisconnectableClient>(
  opts: DatabasePluginOptions<Client>,
): FastifyPluginAsync<{ config: DatabaseConfig }> {
  return fp(
    async (app: FastifyInstance, { config }: { config: DatabaseConfig }) => {
      const pool = new pg.Pool({
        ...sessionConnection(config.DATABASE_URL, {
          statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
          lockTimeoutMs: config.DATABASE_LOCK_TIMEOUT_MS,
          idleInTransactionTimeoutMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
        }),
        max: config.DATABASE_POOL_MAX,
        // pg-pool reads 0 as "never" (no idle timer is set).
        idleTimeoutMillis: config.DATABASE_POOL_IDLE_TIMEOUT_MS,
        // A database that is down must fail a request (and the readiness check) quickly, not hang it.
        connectionTimeoutMillis: 5_000,
        application_name: `${opts.service}-service`,
      })
      // An idle client dies when PostgreSQL restarts or an administrator ends its session; the pool
      // drops it and opens another when needed. This is the one line per idle connection lost (the
      // error's type, message and code: the logger's serializer leaves out the client pg attaches).
      // A connection that is checked out is reported by its holder, whose query fails.
      pool.on('error', (err) => app.log.warn({ err }, 'idle database connection lost'))
      // pg emits 'error' on a client whose session ends between two of its statements (57P01 from
      // pg_terminate_backend, a restart) and throws when nobody listens. pg-pool listens only while a
      // client is idle, and each caller only while it holds one, so a gap anywhere (a library's
      // checkout, a release racing the server's message) was an uncaught exception that killed the
      // process: seen about one run in three of database-faults.int.test.ts. Every client the pool
      // makes gets a listener for its whole life; the client is then unusable, its next query fails
      // and its holder releases it as broken, which is the path every caller already has. It logs
      // nothing: the pool's listener above or the holder reports the loss, once.
      pool.on('connect', (client) => client.on('error', ignoreClientError))
      try {
        if (config.MIGRATE_ON_START) {
          await runMigrations({ pool, migrationsDir: opts.migrationsDir, logger: app.log })
        }
      } catch (error) {
        await pool.end()
        throw error
      }
      const client = opts.createClient(pool)
      app.decorate('pool', pool)
      app.decorate<DisconnectableClient>('prisma', client)
      app.addHook('onClose', async () => {
        await client.$disconnect()
        await pool.end()
      })
    },
    { name: 'db', fastify: '5.x' },
  )
}
