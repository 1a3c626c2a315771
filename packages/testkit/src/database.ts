import { readFile } from 'node:fs/promises'
import pg from 'pg'
import { uniqueName } from './names.js'

/** The server tests create their databases on. */
export const POSTGRES_URL = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

/** A database made for one test file; `drop()` removes it. */
export interface TestDatabase {
  /** Its name, e.g. `relay_m3k9x_1a2b3c4d`. */
  name: string
  /** Connection URL to it. */
  url: string
  /** A pool on it (max 10 connections); ended by `drop()`. */
  pool: pg.Pool
  /** Ends the pool and drops the database once its sessions ended (`dropDatabaseWhenIdle`: FORCE after 2 s). */
  drop(): Promise<void>
}

/** Options of `createTestDatabase`. */
export interface TestDatabaseOptions {
  /** Name prefix, e.g. `relay`. */
  prefix: string
  /** SQL files applied in order after creation (e.g. `packages/messaging/sql/messaging.sql`). */
  sqlFiles?: string[]
  /** Admin URL; default `POSTGRES_URL` env or postgresql://postgres@127.0.0.1:5432/postgres. */
  adminUrl?: string
}

/**
 * Drops database `name` through `admin` once its sessions have ended, waiting up to `waitMs` (ms,
 * default 2,000) for them, then `DROP DATABASE … WITH (FORCE)` (PostgreSQL 13+) for any left.
 * Why wait: `pool.end()` resolves before every client's socket has closed, and FORCE terminates a
 * session that is still closing with 57P01, which reaches a client whose pool no longer listens for
 * errors: an unhandled error that fails the test run although every test passed (seen in CI).
 */
export async function dropDatabaseWhenIdle(admin: pg.Client, name: string, waitMs = 2_000): Promise<void> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const { rows } = await admin.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    )
    if ((rows[0]?.n ?? 0) === 0 || Date.now() > deadline) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`)
}

async function onAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Creates a uniquely named database, applies `sqlFiles`, and returns it with a pool. */
export async function createTestDatabase(options: TestDatabaseOptions): Promise<TestDatabase> {
  const adminUrl = options.adminUrl ?? POSTGRES_URL
  const name = uniqueName(options.prefix).slice(0, 63)
  await onAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`))
  const parsed = new URL(adminUrl)
  parsed.pathname = `/${name}`
  const url = parsed.toString()
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  // A connection the server kills (a test's pg_terminate_backend) must not crash the test process.
  pool.on('error', () => undefined)
  let dropped = false
  const drop = async (): Promise<void> => {
    if (dropped) return
    dropped = true
    await pool.end().catch(() => undefined)
    await onAdmin(adminUrl, (client) => dropDatabaseWhenIdle(client, name))
  }
  try {
    for (const file of options.sqlFiles ?? []) await pool.query(await readFile(file, 'utf8'))
  } catch (error) {
    await drop()
    throw error
  }
  return { name, url, pool, drop }
}

/** A per-run database migrated by the service's own runner, with the client the tests read through. */
export interface MigratedDatabase<C> extends TestDatabase {
  client: C
}

/** Options of `createMigratedDatabase`. */
export interface MigratedDatabaseOptions<C> {
  /** Name prefix, e.g. `inventory_reserve`. */
  prefix: string
  /** Applies the service's migrations on the pool (e.g. service-kit's `runMigrations`). */
  migrate(pool: pg.Pool): Promise<unknown>
  /** Makes the client over the pool (e.g. the service's PrismaClient through @prisma/adapter-pg). */
  client(pool: pg.Pool): C
}

/**
 * Creates `<prefix>_<random>`, migrates it and opens `client` on its pool; `drop()` disconnects the
 * client, then drops the database. A failed migration drops it before rethrowing.
 */
export async function createMigratedDatabase<C extends { $disconnect(): Promise<void> }>(
  options: MigratedDatabaseOptions<C>,
): Promise<MigratedDatabase<C>> {
  const db = await createTestDatabase({ prefix: options.prefix })
  const client = options.client(db.pool)
  const drop = async (): Promise<void> => {
    await client.$disconnect()
    await db.drop()
  }
  try {
    await options.migrate(db.pool)
  } catch (error) {
    await drop()
    throw error
  }
  return { ...db, client, drop }
}
