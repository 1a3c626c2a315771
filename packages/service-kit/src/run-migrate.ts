import pg from 'pg'
import pino from 'pino'
import { loadConfigOrExit } from './env.js'
import { loggerOptions } from './logger.js'
import { runMigrations } from './migrate.js'

/** Options of `runMigrate`. */
export interface RunMigrateOptions<C extends { DATABASE_URL: string; LOG_LEVEL: string }> {
  /** Names the log lines and the messages printed before a logger exists, e.g. `order-service`. */
  service: string
  /** Parses the environment; an `EnvError` is printed and the process exits with code 1. */
  loadConfig: () => C
  /** The service's prisma/migrations folder (absolute path). */
  migrationsDir: string
}

/**
 * The `migrate` entry point of a service (the init container of each Kubernetes pod): parse the
 * config, apply the pending migrations with `runMigrations` over one connection to DATABASE_URL, log
 * what was applied, and exit 0. Exits 1 naming each bad variable, or with the MigrationError (file and
 * SQL error; that migration rolled back whole). Run it with MIGRATE_ON_START=false on the services.
 */
export async function runMigrate<C extends { DATABASE_URL: string; LOG_LEVEL: string }>(
  opts: RunMigrateOptions<C>,
): Promise<void> {
  const config = loadConfigOrExit(opts.service, opts.loadConfig)
  const logger = pino(loggerOptions(opts.service, config.LOG_LEVEL))
  const pool = new pg.Pool({
    connectionString: config.DATABASE_URL,
    max: 1,
    connectionTimeoutMillis: 10_000,
    application_name: `${opts.service}-migrate`,
  })
  pool.on('error', (err) => logger.warn({ err }, 'idle database connection lost'))
  try {
    const applied = await runMigrations({ pool, migrationsDir: opts.migrationsDir, logger })
    logger.info({ applied }, applied.length > 0 ? 'migrations applied' : 'database is up to date')
  } catch (error) {
    logger.fatal({ err: error }, 'migration failed')
    process.exitCode = 1
  } finally {
    await pool.end()
  }
}
