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
    detail = '',
  ) {
    super(
      `migration ${migration} failed (${file})${detail}: ${cause instanceof Error ? cause.message : String(cause)}`,
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
  /**
   * `lock_timeout` of a migration's statements (ms, default 1,000). A DDL statement queued behind a
   * long transaction makes every later reader and writer of that table queue behind it; giving up
   * after this long bounds how long a deploy can stall them. It must stay below the services'
   * DATABASE_LOCK_TIMEOUT_MS (2 s), so their requests outwait a migration rather than fail.
   */
  statementLockTimeoutMs?: number | undefined
  /**
   * How long a migration whose locks were not granted is retried (rolled back, backed off 0.25 s
   * doubling to 4 s, run again) before the runner gives up (ms, default 120,000).
   */
  lockRetryMs?: number | undefined
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
 * run applies nothing. Returns the names applied. A migration's statements wait at most
 * `statementLockTimeoutMs` for a lock; when one is not granted the migration is rolled back and
 * retried with backoff for up to `lockRetryMs`, so a deploy never freezes the tables it alters.
 * Settings are transaction-local: the pooled connection goes back to the pool as it came.
 * @throws MigrationError naming the file and the SQL error; that migration is rolled back whole and
 *   nothing after it runs. Also throws when Prisma recorded an unfinished (failed) migration, and
 *   when another instance holds the migration lock for longer than `lockTimeoutMs`.
 */
export async function runMigrations(opts: RunMigrationsOptions): Promise<string[]> {
  const migrations = await readMigrations(opts.migrationsDir)
  const client = await opts.pool.connect()
  try {
    await takeAdvisoryLock(client, opts.lockTimeoutMs ?? 60_000)
    try {
      return await applyPending(client, migrations, opts)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY])
    }
  } finally {
    client.release()
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Polling pg_try_advisory_lock rather than waiting in pg_advisory_lock: a wait would need a session
// lock_timeout, which would then stay on the pooled connection.
async function takeAdvisoryLock(client: PoolClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      MIGRATION_LOCK_KEY,
    ])
    if (rows[0]?.locked) return
    if (Date.now() >= deadline)
      throw new Error(
        `another instance held the migration lock (advisory lock ${MIGRATION_LOCK_KEY}) for more than ${timeoutMs} ms`,
      )
    await sleep(200)
  }
}

async function applyPending(client: PoolClient, migrations: MigrationFile[], opts: RunMigrationsOptions) {
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
        opts.logger?.warn({ migration: migration.name }, 'migration was modified after it was applied')
      }
      continue
    }
    await applyWithRetry(client, migration, opts)
    opts.logger?.info({ migration: migration.name }, 'migration applied')
    done.push(migration.name)
  }
  return done
}

// SQLSTATE 55P03 lock_not_available: lock_timeout expired (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const isLockTimeout = (error: unknown) => (error as { code?: unknown } | null)?.code === '55P03'

async function applyWithRetry(client: PoolClient, migration: MigrationFile, opts: RunMigrationsOptions) {
  const lockMs = Math.trunc(opts.statementLockTimeoutMs ?? 1_000)
  const deadline = Date.now() + (opts.lockRetryMs ?? 120_000)
  for (let attempt = 1; ; attempt += 1) {
    try {
      await applyOne(client, migration, lockMs)
      return
    } catch (error) {
      const delayMs = Math.min(250 * 2 ** (attempt - 1), 4_000) + Math.floor(Math.random() * 250)
      if (!isLockTimeout(error) || Date.now() + delayMs > deadline) {
        const why = isLockTimeout(error)
          ? ` (locks not granted within ${lockMs} ms in ${attempt} attempts)`
          : ''
        throw new MigrationError(migration.name, migration.file, error, why)
      }
      opts.logger?.warn(
        { migration: migration.name, attempt, delayMs, lockTimeoutMs: lockMs },
        'migration could not get its locks in time; rolled back, retrying',
      )
      await sleep(delayMs)
    }
  }
}

async function applyOne(client: PoolClient, migration: MigrationFile, lockTimeoutMs: number) {
  try {
    // No statement limit: a migration may rewrite a table. The role's default would cancel it.
    await client.query(
      `BEGIN; SET LOCAL lock_timeout = ${lockTimeoutMs}; SET LOCAL statement_timeout = 0;
       SET LOCAL idle_in_transaction_session_timeout = 0`,
    )
    await client.query(migration.sql)
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    )
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  }
}
