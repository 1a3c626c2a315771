import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { message, pendingCount, relayFixture } from './relay-fixture.js'

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
        5_000,
        'the ALTER to queue behind the reader',
      )

      const timed = async (what: () => Promise<unknown>): Promise<{ ms: number; error: unknown }> => {
        const started = performance.now()
        const error = await what().then(
          () => undefined,
          (e: unknown) => e,
        )
        return { ms: performance.now() - started, error }
      }
      const stats = await timed(() => relay.refreshStats())
      const retention = await timed(() => relay.runRetention())
      for (const outcome of [stats, retention]) {
        expect((outcome.error as { code?: string } | undefined)?.code).toBe('55P03') // lock_not_available
        expect(outcome.ms).toBeLessThan(2_000)
      }

      await relay.start()
      await f.until(
        () =>
          f.logger.entries.some(
            (e) =>
              e.msg === 'outbox relay database round failed; retrying' &&
              (e.obj as { err?: { code?: string } }).err?.code === '55P03',
          ),
        5_000,
        'the relay to give up its claim',
      )
      // None of the relay's statements waits in the lock queue past its 1 s bound, so it does not
      // drain the pool while the migration waits.
      for (let look = 0; look < 5; look += 1) {
        const { rows } = await f.db.pool.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock'
             AND query NOT LIKE 'ALTER TABLE%' AND now() - query_start > interval '1500 ms'`,
        )
        expect(rows[0]?.waiting).toBe(0)
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
    } finally {
      await reader.query('COMMIT').catch(() => undefined)
      await altered.catch(() => undefined)
      await migrator.query('ROLLBACK').catch(() => undefined)
      reader.release()
      migrator.release()
    }
    await f.until(
      async () => (await f.row(id as string)).published_at !== null,
      5_000,
      'the row to be published after the ALTER',
    )
    expect(await pendingCount(f.db.pool)).toBe(0)
    await relay.stop()
  })
})
