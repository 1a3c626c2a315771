import Fastify, { type FastifyInstance } from 'fastify'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { metricsPlugin } from '../src/metrics.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

// A transaction left open by anyone stops VACUUM; /metrics must show it, and the dead
// rows piling up in the messaging tables, so an alert can fire.
let db: ScratchDatabase
let pool: pg.Pool
let app: FastifyInstance

beforeAll(async () => {
  db = await createScratchDatabase('dbmetrics')
  pool = new pg.Pool({ connectionString: db.url, max: 3 })
  await pool.query(
    `CREATE TABLE outbox_message (id int PRIMARY KEY); CREATE TABLE inbox_message (id int PRIMARY KEY)`,
  )
  app = Fastify({ logger: false })
  await app.register(metricsPlugin, { service: 'kit', database: pool })
  await app.ready()
})

afterAll(async () => {
  await app?.close()
  await pool?.end()
  await db?.drop()
})

/** The value of one series in a /metrics scrape, or undefined when absent. */
async function scrape(series: string): Promise<number | undefined> {
  const res = await app.inject({ method: 'GET', url: '/metrics' })
  const line = res.body.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('database metrics', () => {
  it('when a REPEATABLE READ transaction stays open, then the oldest transaction age and snapshot age show it, and drop once it ends', async () => {
    const holder = new pg.Client({ connectionString: db.url })
    await holder.connect()
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM outbox_message')
      // Transactions committed after the snapshot make its xmin age grow.
      for (let i = 0; i < 5; i += 1) await pool.query('INSERT INTO inbox_message VALUES ($1)', [i])
      await expect
        .poll(() => scrape('saga_db_oldest_transaction_age_seconds{saga_service="kit"}'), { timeout: 10_000 })
        .toBeGreaterThanOrEqual(1)
      expect(await scrape('saga_db_oldest_xmin_age_transactions{saga_service="kit"}')).toBeGreaterThanOrEqual(
        5,
      )
      await holder.query('COMMIT')
      await expect
        .poll(() => scrape('saga_db_oldest_transaction_age_seconds{saga_service="kit"}'), { timeout: 10_000 })
        .toBeLessThan(1)
    } finally {
      await holder.end()
    }
  })

  it('when outbox rows are deleted, then their dead rows are exported per table', async () => {
    await pool.query('INSERT INTO outbox_message SELECT generate_series(1, 40)')
    await pool.query('DELETE FROM outbox_message')
    await expect
      .poll(() => scrape('saga_db_dead_rows{table="outbox_message",saga_service="kit"}'), { timeout: 10_000 })
      .toBeGreaterThanOrEqual(40)
    expect(await scrape('saga_db_dead_rows{table="inbox_message",saga_service="kit"}')).toBe(0)
  })
})
