import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import pg from 'pg'
import { deleteExpired, vacuumOutbox } from '../src/outbox/retention.js'
import { relayFixture } from './relay-fixture.js'

const HOUR_MS = 3_600_000

describe('outbox: retention and stats', () => {
  const f = useFixture(() => relayFixture('outbox_retention'))

  /** Inserts `count` rows of one kind, all occurred/published/parked `ageMs` ago. */
  const rows = async (
    kind: 'published' | 'pending' | 'parked',
    count: number,
    ageMs: number,
  ): Promise<void> => {
    await f.db.pool.query(
      `INSERT INTO outbox_message (id, type, routing_key, payload, occurred_at, available_at, published_at, failed_at, attempts)
       SELECT gen_random_uuid(), 'test.kept.v1', 'test.kept', '{}'::jsonb, t, t,
              CASE WHEN $2 = 'published' THEN t END, CASE WHEN $2 = 'parked' THEN t END,
              CASE WHEN $2 = 'parked' THEN 10 ELSE 0 END
       FROM generate_series(1, $1::int), LATERAL (SELECT now() - $3 * interval '1 millisecond' AS t) AS at`,
      [count, kind, ageMs],
    )
  }
  const counts = async (): Promise<Record<string, number>> => {
    const { rows: found } = await f.db.pool.query<{ kind: string; n: number }>(
      `SELECT CASE WHEN published_at IS NOT NULL THEN 'published' WHEN failed_at IS NOT NULL THEN 'parked' ELSE 'pending' END AS kind,
              count(*)::int AS n FROM outbox_message GROUP BY 1`,
    )
    return Object.fromEntries(found.map((r) => [r.kind, r.n]))
  }

  it('when published rows pass the retention, then they go in bounded chunks and pending and parked rows stay', async () => {
    await f.db.pool.query('TRUNCATE outbox_message, inbox_message')
    await rows('published', 35, 2 * HOUR_MS)
    await rows('published', 5, 10 * 60_000)
    await rows('pending', 4, 3 * HOUR_MS)
    await rows('parked', 3, 3 * HOUR_MS)
    const first = await deleteExpired(f.db.pool, { retentionMs: HOUR_MS, chunkSize: 10, maxChunks: 2 })
    expect(first.outbox).toBe(20)
    expect(await counts()).toEqual({ published: 20, pending: 4, parked: 3 })
    const second = await deleteExpired(f.db.pool, { retentionMs: HOUR_MS, chunkSize: 10, maxChunks: 2 })
    expect(second.outbox).toBe(15)
    expect(await counts()).toEqual({ published: 5, pending: 4, parked: 3 })
  })

  it('when inbox rows are older than the inbox retention (default 7 days), then only those go', async () => {
    await f.db.pool.query('TRUNCATE inbox_message')
    const insert = (ageMs: number) =>
      f.db.pool.query(
        `INSERT INTO inbox_message (message_id, handler, received_at) VALUES ($1, 'h', now() - $2 * interval '1 millisecond')`,
        [randomUUID(), ageMs],
      )
    await insert(8 * 24 * HOUR_MS)
    await insert(6 * 24 * HOUR_MS)
    await insert(60_000)
    const result = await deleteExpired(f.db.pool, { retentionMs: HOUR_MS })
    const { rows: left } = await f.db.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM inbox_message',
    )
    expect(result.inbox).toBe(1)
    expect(left[0]?.n).toBe(2)
  })

  it('when the relay runs retention on its timer, then old published rows disappear by themselves', async () => {
    await f.db.pool.query('TRUNCATE outbox_message')
    await rows('published', 12, 2 * HOUR_MS)
    await rows('published', 2, 60_000)
    const relay = f.relay({ retentionMs: HOUR_MS, retentionIntervalMs: 100 })
    await relay.start()
    await f.until(async () => (await counts()).published === 2, 5_000, 'retention to run')
    await relay.stop()
  })

  it('when the relay has marked enough rows, then it vacuums the outbox (dead pending-index entries slow claims)', async () => {
    const vacuums = async (): Promise<number> => {
      const { rows: found } = await f.db.pool.query<{ n: number }>(
        "SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'outbox_message'",
      )
      return found[0]?.n ?? 0
    }
    const before = await vacuums()
    const relay = f.relay({ retentionMs: HOUR_MS, retentionIntervalMs: 100, vacuumAfterRows: 50 })
    await relay.start()
    await f.backlog(60)
    relay.wake()
    await f.until(async () => (await vacuums()) > before, 10_000, 'a VACUUM of outbox_message')
    await relay.stop()
  })

  it('when rows are pending and parked, then the stats report the count, the oldest age and the parked count', async () => {
    await f.db.pool.query('TRUNCATE outbox_message')
    await rows('pending', 3, 90_000)
    await rows('parked', 2, 10_000)
    // Not started: stats read the table without publishing anything.
    const relay = f.relay()
    const stats = await relay.refreshStats()
    expect(stats.pending).toBe(3)
    expect(stats.parked).toBe(2)
    expect(stats.oldestPendingAgeMs).toBeGreaterThanOrEqual(90_000)
    expect(stats.oldestPendingAgeMs).toBeLessThan(90_000 + 60_000)
  })

  it('when the sessions have a statement_timeout shorter than a VACUUM, then vacuumOutbox still completes and the bound is back afterwards', async () => {
    await rows('published', 2_000, 2 * HOUR_MS)
    await deleteExpired(f.db.pool, { retentionMs: HOUR_MS, chunkSize: 1_000, maxChunks: 2 })
    // Sessions bounded by a startup option, as the services' pools bound theirs (to 5 s). The bound
    // must hold the SET and RESET vacuumOutbox sends even on a loaded machine, and a VACUUM must
    // outlast it every time: the cost-based delay makes this one sleep 20-80 ms per page it
    // touches (about 2 s here, against 1 ms without), so a 500 ms bound is passed by wall-clock
    // sleeps alone, however fast the machine.
    const bounded = new pg.Pool({
      connectionString: f.db.url,
      max: 1,
      options: '-c statement_timeout=500 -c vacuum_cost_delay=20 -c vacuum_cost_limit=1',
    })
    try {
      const plainVacuum = () =>
        bounded.query('VACUUM (SKIP_LOCKED) outbox_message').then(
          () => 'completed',
          (error: { code?: string }) => error.code,
        )
      expect(await plainVacuum()).toBe('57014')
      await vacuumOutbox(bounded)
      // The session's own bound is back: with dead rows again, a plain VACUUM on the same connection
      // is cancelled again.
      await rows('published', 2_000, 2 * HOUR_MS)
      await deleteExpired(f.db.pool, { retentionMs: HOUR_MS, chunkSize: 1_000, maxChunks: 2 })
      expect(await plainVacuum()).toBe('57014')
    } finally {
      await bounded.end()
    }
  })
})
