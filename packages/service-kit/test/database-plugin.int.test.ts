import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest'
import { databasePlugin, type DatabaseConfig } from '../src/database-plugin.js'
import { DEFAULT_POOL_IDLE_TIMEOUT_MS } from '../src/database-session.js'
import { serviceEnvSchema } from '../src/env.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

// The pool keeps its connections through a pause: pg's own 10 s idle timeout would close them, and
// the next burst would pay a new backend per connection (docs/performance.md).
let db: ScratchDatabase
let admin: pg.Client
let app: FastifyInstance | undefined

beforeAll(async () => {
  db = await createScratchDatabase('pool')
  admin = new pg.Client({
    connectionString: process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  })
  await admin.connect()
})

afterEach(async () => {
  await app?.close()
  app = undefined
})

afterAll(async () => {
  await admin?.end()
  await db?.drop()
})

async function start(idleTimeoutMs: number): Promise<FastifyInstance> {
  const config: DatabaseConfig = {
    ...serviceEnvSchema({ service: 'payment', port: 0 }).parse({}),
    DATABASE_URL: db.url,
    MIGRATE_ON_START: false,
    DATABASE_POOL_MAX: 3,
    DATABASE_POOL_IDLE_TIMEOUT_MS: idleTimeoutMs,
  }
  const instance = Fastify({ logger: false })
  const plugin = databasePlugin({
    service: 'payment',
    migrationsDir: '/nonexistent',
    createClient: () => ({ $disconnect: () => Promise.resolve() }),
  })
  await instance.register(plugin, { config })
  await instance.ready()
  app = instance
  return instance
}

/** Sessions the server has open on the scratch database for the pool's application name. */
async function serverSessions(): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'payment-service'",
    [db.name],
  )
  return rows[0]!.n
}

/** Checks out every connection of the pool at once, runs a statement on each, and gives them back. */
async function openAll(pool: pg.Pool, size: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()))
  await Promise.all(clients.map((c) => c.query('SELECT 1')))
  for (const c of clients) c.release()
}

describe('the pool of databasePlugin', () => {
  it('when no idle timeout is set, then it is ten minutes', () => {
    expect(serviceEnvSchema({ service: 'payment', port: 0 }).parse({}).DATABASE_POOL_IDLE_TIMEOUT_MS).toBe(
      DEFAULT_POOL_IDLE_TIMEOUT_MS,
    )
    expect(DEFAULT_POOL_IDLE_TIMEOUT_MS).toBe(600_000)
  })

  it('when DATABASE_POOL_IDLE_TIMEOUT_MS is 300, then idle connections are closed, on both ends, after it', async () => {
    const { pool } = await start(300)
    await openAll(pool, 3)
    expect(await serverSessions()).toBe(3)
    await expect.poll(() => pool.totalCount, { timeout: 5_000 }).toBe(0)
    await expect.poll(serverSessions, { timeout: 5_000 }).toBe(0)
  })

  it('when DATABASE_POOL_IDLE_TIMEOUT_MS is 0, then idle connections stay open', async () => {
    const { pool } = await start(0)
    await openAll(pool, 3)
    await sleep(1_500)
    expect(pool.totalCount).toBe(3)
    expect(pool.idleCount).toBe(3)
    expect(await serverSessions()).toBe(3)
  })
})
