import { type ServiceUnderTest } from '@saga/testkit'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outageProbe, startOrderUnderTest, type OrderApp, type Outcome } from './support/outage.js'

// Database outages and limits against the real server: whatever takes the database away or blocks it, a
// request is answered 201 or 503 with Retry-After (never 500, never a minute later), and the
// service recovers by itself. A restart of the server: postgres-restart.int.test.ts.
let s: ServiceUnderTest<OrderApp>
const { placeUnderFault, recovered, expectOnly201Or503 } = outageProbe(() => s)

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

  // A service of its own, with statement_timeout off: then the only limit that can end a POST waiting
  // behind the queued ALTER before the long transaction commits is lock_timeout (2 s). Were it
  // missing or ignored, each POST would wait for the COMMIT, which comes only after them, and the
  // test would hang until its timeout; a 503 here is lock_timeout's doing, however late it comes.
  it(
    'when an ALTER TABLE waits behind a long transaction, then POST /orders is 503 with Retry-After by lock_timeout, reads still work, and writes resume after',
    { timeout: 120_000 },
    async () => {
      const locked = await startOrderUnderTest(undefined, { DATABASE_STATEMENT_TIMEOUT_MS: '0' })
      const probe = outageProbe(() => locked)
      const reader = new pg.Client({ connectionString: locked.db.url })
      const migrator = new pg.Client({ connectionString: locked.db.url })
      try {
        const limits = await locked.app.pool.query<{ lock: string; statement: string }>(
          `SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement`,
        )
        expect(limits.rows[0]).toEqual({ lock: '2s', statement: '0' })
        const first = await probe.placeOrder()
        expect(first.status).toBe(201)
        await reader.connect()
        await migrator.connect()
        // The input: a transaction that read outbox_message, and a migration queued behind it.
        await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM outbox_message')
        const altered = migrator.query('ALTER TABLE outbox_message ADD COLUMN x int')
        await expect.poll(() => lockWaiters(locked), { timeout: 30_000 }).toBeGreaterThan(0)

        const blocked: Outcome[] = []
        for (let i = 0; i < 4; i += 1) {
          const [post, get] = await Promise.all([
            probe.placeOrder(),
            locked.app.inject({ method: 'GET', url: `/orders/${first.id}` }),
          ])
          blocked.push(post)
          expect(get.statusCode).toBe(200)
        }
        console.info(
          `lock wait: ${blocked.length} x ${blocked.map((o) => o.status).join('/')} in ${blocked.map((o) => Math.round(o.ms)).join(', ')} ms`,
        )
        expect(blocked.map((o) => [o.status, o.retryAfter])).toEqual(Array(4).fill([503, '2']))
        // The ALTER is still queued: the 503s came while the lock was held, not after it was freed.
        expect(await lockWaiters(locked)).toBeGreaterThan(0)
        expect(locked.app.pool.waitingCount).toBe(0)

        await reader.query('COMMIT')
        await altered
        expect((await probe.recovered()).status).toBe(201)
      } finally {
        await reader.end()
        await migrator.end()
        await locked.close()
      }
    },
  )
})

/** Sessions of `service`'s database waiting for a lock. */
async function lockWaiters(service: ServiceUnderTest<OrderApp>): Promise<number> {
  const { rows } = await service.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  )
  return rows[0]?.n ?? 0
}
