import { createHash, randomUUID } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Pool, PoolClient } from 'pg'

/**
 * The advisory lock key Prisma's schema engine takes while migrating (72707369), so this runner and
 * `prisma migrate deploy` exclude each other as well as two service instances starting at once.
 */
export const MIGRATION_LOCK_KEY = 72_707_369

/** Prisma's bookkeeping table, as its schema engine creates it for PostgreSQL. */
const CREATE_BOOKKEEPING = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`

/** A migration on disk: `prisma/migrations/<name>/migration.sql`. */
export interface MigrationFile {
  name: string
  file: string
  sql: string
  /** sha256 of the file, lowercase hex: what Prisma stores in `_prisma_migrations.checksum`. */
  checksum: string
}

/** Thrown when a migration fails: names the file and carries PostgreSQL's error. */
export class MigrationError extends Error {
  constructor(
    readonly migration: string,
    readonly file: string,
    cause: unknown,
  ) {
    super(
      `migration ${migration} failed (${file}): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    )
    this.name = 'MigrationError'
  }
}

/** Minimal logger the runner reports to. */
interface MigrationLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

/** Options of `runMigrations`. */
export interface RunMigrationsOptions {
  pool: Pool
  /** The folder holding `<timestamp>_<name>/migration.sql` folders (Prisma's layout). */
  migrationsDir: string
  logger?: MigrationLogger | undefined
  /** How long to wait for another instance's migration lock (ms, default 60,000). */
  lockTimeoutMs?: number | undefined
}

/** Reads the migrations in name order (Prisma names start with a UTC timestamp, so this is time order). */
export async function readMigrations(migrationsDir: string): Promise<MigrationFile[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    },
  )
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
  return Promise.all(
    names.map(async (name) => {
      const file = join(migrationsDir, name, 'migration.sql')
      const buffer = await readFile(file)
      return {
        name,
        file,
        sql: buffer.toString('utf8'),
        checksum: createHash('sha256').update(buffer).digest('hex'),
      }
    }),
  )
}

interface AppliedRow {
  migration_name: string
  checksum: string
  finished_at: Date | null
  rolled_back_at: Date | null
}

/**
 * Applies every migration not yet recorded in `_prisma_migrations`, in order, each in its own
 * transaction together with its bookkeeping row, under Prisma's advisory lock. Idempotent: a second
 * run applies nothing. Returns the names applied.
 * @throws MigrationError naming the file and the SQL error; that migration is rolled back whole and
 *   nothing after it runs. Also throws when Prisma recorded an unfinished (failed) migration.
 */
export async function runMigrations(opts: RunMigrationsOptions): Promise<string[]> {
  const migrations = await readMigrations(opts.migrationsDir)
  const client = await opts.pool.connect()
  try {
    await client.query(`SET lock_timeout = ${Math.trunc(opts.lockTimeoutMs ?? 60_000)}`)
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
    try {
      return await applyPending(client, migrations, opts.logger)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
    }
  } finally {
    client.release()
  }
}

async function applyPending(client: PoolClient, migrations: MigrationFile[], logger?: MigrationLogger) {
  await client.query(CREATE_BOOKKEEPING)
  const { rows } = await client.query<AppliedRow>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
  )
  const unfinished = rows.find((r) => r.finished_at === null)
  if (unfinished) {
    throw new Error(
      `migration ${unfinished.migration_name} is recorded as started but not finished in _prisma_migrations; ` +
        'fix the database, then mark it with `prisma migrate resolve`',
    )
  }
  const applied = new Map(rows.map((r) => [r.migration_name, r]))
  const done: string[] = []
  for (const migration of migrations) {
    const previous = applied.get(migration.name)
    if (previous) {
      if (previous.checksum !== migration.checksum) {
        // Prisma warns about this too; editing an applied migration is a mistake, but not one to stop for.
        logger?.warn({ migration: migration.name }, 'migration was modified after it was applied')
      }
      continue
    }
    await applyOne(client, migration)
    logger?.info({ migration: migration.name }, 'migration applied')
    done.push(migration.name)
  }
  return done
}

async function applyOne(client: PoolClient, migration: MigrationFile) {
  try {
    await client.query('BEGIN')
    await client.query(migration.sql)
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    )
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw new MigrationError(migration.name, migration.file, error)
  }
}
