import { type ServiceUnderTest } from '@saga/testkit'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outageProbe, startOrderUnderTest, type OrderApp, type Outcome } from './support/outage.js'

// Database outages and limits against the real server: whatever takes the database away or blocks it, a
// request is answered 201 or 503 with Retry-After (never 500, never a minute later), and the
// service recovers by itself. A restart of the server: postgres-restart.int.test.ts.
let s: ServiceUnderTest<OrderApp>
const { placeOrder, placeUnderFault, recovered, expectOnly201Or503 } = outageProbe(() => s)

beforeAll(async () => {
  s = await startOrderUnderTest()
})

afterAll(async () => {
  await s?.close()
})

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('the order service when its database fails', () => {
  it('when /metrics is scraped, then the database series an alert needs are there', async () => {
    const res = await s.app.inject({ method: 'GET', url: '/metrics' })
    expect(res.body).toMatch(/^saga_db_oldest_transaction_age_seconds\{saga_service="order"\} \d/m)
    expect(res.body).toMatch(/^saga_db_dead_rows\{table="outbox_message",saga_service="order"\} \d/m)
  })

  it('when the link to PostgreSQL is cut for 1.5 s under load, then every answer is 201 or 503 with Retry-After, and it recovers', async () => {
    const outcomes = await placeUnderFault(40, 4, 8, async () => {
      s.pgProxy.cut()
      await wait(1_500)
      s.pgProxy.restore()
    })
    await expectOnly201Or503('link cut', outcomes)
    expect(outcomes.some((o) => o.status === 503)).toBe(true)
    expect((await recovered()).status).toBe(201)
  })

  it("when an administrator terminates the service's sessions (57P01) under load, then 201 or 503 with Retry-After, and it recovers", async () => {
    const outcomes = await placeUnderFault(40, 4, 8, async () => {
      for (let i = 0; i < 5; i += 1) {
        await s.db.pool.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND application_name = 'order-service'`,
        )
        await wait(150)
      }
    })
    await expectOnly201Or503('sessions terminated', outcomes)
    expect((await recovered()).status).toBe(201)
  })

  it('when an ALTER TABLE waits behind a long transaction, then POST /orders is 503 with Retry-After within the lock bound, reads still work, and writes resume after', async () => {
    const first = await placeOrder()
    expect(first.status).toBe(201)
    const reader = new pg.Client({ connectionString: s.db.url })
    const migrator = new pg.Client({ connectionString: s.db.url })
    await reader.connect()
    await migrator.connect()
    try {
      // The input: a transaction that read outbox_message, and a migration queued behind it.
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM outbox_message')
      const altered = migrator.query('ALTER TABLE outbox_message ADD COLUMN x int')
      await expect.poll(() => lockWaiters(), { timeout: 10_000 }).toBeGreaterThan(0)

      const blocked: Outcome[] = []
      for (let i = 0; i < 4; i += 1) {
        const [post, get] = await Promise.all([
          placeOrder(),
          s.app.inject({ method: 'GET', url: `/orders/${first.id}` }),
        ])
        blocked.push(post)
        expect(get.statusCode).toBe(200)
      }
      expect(blocked.map((o) => [o.status, o.retryAfter])).toEqual(Array(4).fill([503, '2']))
      // lock_timeout is 2 s; the rest is this loaded machine. Before the limits: 52-58 s.
      const slowest = Math.max(...blocked.map((o) => o.ms))
      console.info(
        `lock wait: ${blocked.length} x 503 in ${blocked.map((o) => Math.round(o.ms)).join(', ')} ms`,
      )
      expect(slowest).toBeLessThan(4_000)
      expect(s.app.pool.waitingCount).toBe(0)

      await reader.query('COMMIT')
      await altered
      expect((await recovered()).status).toBe(201)
    } finally {
      await reader.end()
      await migrator.end()
    }
  })
})

/** Sessions of this database waiting for a lock. */
async function lockWaiters(): Promise<number> {
  const { rows } = await s.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  )
  return rows[0]?.n ?? 0
}
