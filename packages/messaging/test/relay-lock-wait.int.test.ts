import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { message, pendingCount, relayFixture } from './relay-fixture.js'

/** Runs `what`; how long it took (ms) and what it threw (undefined if it did not). */
async function timed(what: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = performance.now()
  const error = await what().then(
    () => undefined,
    (e: unknown) => e,
  )
  return { ms: performance.now() - started, error }
}

/** Failed relay rounds whose error was lock_timeout's 55P03, among the logged `entries`. */
function lockGiveUps(entries: readonly { msg?: string; obj?: unknown }[]): number {
  return entries.filter(
    (e) =>
      e.msg === 'outbox relay database round failed; retrying' &&
      (e.obj as { err?: { code?: string } } | undefined)?.err?.code === '55P03',
  ).length
}

// A transaction reading outbox_message, and a migration's ALTER TABLE queued behind it: every later
// statement on the table queues behind the ALTER for as long as it waits, so the relay, its stats and
// retention must give up within their bounds.
describe('relay: a migration queued on the outbox table', () => {
  const f = useFixture(() => relayFixture('relay_lock_wait'))

  it('when an ALTER TABLE waits for a reader, then the relay, its stats and retention give up within their bounds, and the relay publishes once the ALTER is through', async () => {
    const relay = f.relay({ retentionIntervalMs: 0 })
    const [id] = await f.commit([message(1)])
    const reader: pg.PoolClient = await f.db.pool.connect()
    const migrator: pg.PoolClient = await f.db.pool.connect()
    let altered: Promise<unknown> = Promise.resolve()
    try {
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
      await reader.query('SELECT count(*) FROM outbox_message')
      await migrator.query('BEGIN')
      altered = migrator.query('ALTER TABLE outbox_message ADD COLUMN lock_wait_probe int')
      await f.until(
        async () =>
          (
            await f.db.pool.query(
              "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE outbox_message%'",
            )
          ).rowCount === 1,
        30_000,
        'the ALTER to queue behind the reader',
      )

      // 55P03 (lock_not_available) comes only from their lock_timeout: without it they would wait
      // in the queue until the reader commits (after this test). The time only rules out a bound of
      // many seconds; their bound is 1 s.
      const stats = await timed(() => relay.refreshStats())
      const retention = await timed(() => relay.runRetention())
      for (const outcome of [stats, retention]) {
        expect((outcome.error as { code?: string } | undefined)?.code).toBe('55P03')
        expect(outcome.ms).toBeLessThan(30_000)
      }

      await relay.start()
      // The claim gives up (55P03) and is tried again, GIVE_UPS times, each bounded by its 1 s
      // lock_timeout; meanwhile none of the relay's statements may wait in the lock queue for
      // STUCK_MS, far past that bound (generous, for a loaded machine), so it does not drain the pool
      // while the migration waits. The give-ups take GIVE_UPS s at least, so a statement without
      // a bound, queued at the start, would be seen stuck.
      const GIVE_UPS = 6
      const STUCK_MS = 5_000
      const stuck: number[] = []
      const claimGiveUps = () => lockGiveUps(f.logger.entries)
      await f.until(
        async () => {
          const { rows } = await f.db.pool.query<{ waiting: number }>(
            `SELECT count(*)::int AS waiting FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query NOT LIKE 'ALTER TABLE%'
               AND clock_timestamp() - query_start > ${STUCK_MS} * interval '1 millisecond'`,
          )
          stuck.push(rows[0]?.waiting ?? 0)
          return claimGiveUps() >= GIVE_UPS
        },
        60_000,
        'the relay to give up its claim again and again',
      )
      expect(stuck.every((waiting) => waiting === 0)).toBe(true)
    } finally {
      await reader.query('COMMIT').catch(() => undefined)
      await altered.catch(() => undefined)
      await migrator.query('ROLLBACK').catch(() => undefined)
      reader.release()
      migrator.release()
    }
    await f.until(
      async () => (await f.row(id as string)).published_at !== null,
      30_000,
      'the row to be published after the ALTER',
    )
    expect(await pendingCount(f.db.pool)).toBe(0)
    await relay.stop()
  }, 120_000)
})
