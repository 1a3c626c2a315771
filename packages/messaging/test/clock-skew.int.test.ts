import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { toPublishable } from '../src/outbox/envelope.js'
import { readPending } from '../src/outbox/stats.js'
import type { OutboxRow } from '../src/outbox/envelope.js'
import type pg from 'pg'
import { relayFixture } from './relay-fixture.js'

const run = promisify(execFile)
const child = fileURLToPath(new URL('./enqueue-with-process-clock.ts', import.meta.url))
const SKEW_S = 120
// Rounding of an age to the millisecond (occurred_at is timestamptz(3), the age is rounded).
const ROUNDING_MS = 2

/** The database's clock now (`clock_timestamp()`), ms since the epoch. */
async function databaseNow(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ ms: number }>(
    'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms',
  )
  return rows[0]!.ms
}

async function hasFaketime(): Promise<boolean> {
  return run('faketime', ['-f', '+0', 'true']).then(
    () => true,
    () => false,
  )
}

// A row's time and its age must come from one clock, the database's: with the service's clock for
// the time, a process 120 s behind would write rows 120 s old at birth, and one 120 s ahead rows of
// age -119.5 s shown as 0. So each age is held to what the database's clock allows: at most the
// time from just before the commit to just after the read (a row 120 s old is far past it, whatever
// the load), and, once the row has aged, more than 0 (a row born in the future stays at 0 for 120 s).
describe('outbox: one clock judges an age', () => {
  const f = useFixture(() => relayFixture('clock_skew'))

  for (const [label, offset] of [
    ['behind', -SKEW_S],
    ['ahead', SKEW_S],
  ] as const) {
    it(`when a producer's clock is ${SKEW_S} s ${label} (injected), then its row is young at birth, ages in step with the database, and keeps the producer's time as CloudEvents time`, async () => {
      await f.db.pool.query('DELETE FROM outbox_message')
      const occurredAt = new Date(Date.now() + offset * 1_000)
      const beforeCommit = await databaseNow(f.db.pool)
      const [id] = await f.commit([
        {
          type: 'clock.happened.v1',
          routingKey: 'clock.happened',
          payload: {},
          correlationId: 'c',
          occurredAt,
        },
      ])
      const atBirth = await readPending(f.db.pool)
      expect(atBirth.pending).toBe(1)
      expect(atBirth.oldestPendingAgeMs).toBeLessThanOrEqual(
        (await databaseNow(f.db.pool)) - beforeCommit + ROUNDING_MS,
      )
      // It ages: the wait ends once the database says so (a row born 120 s ahead would not for 120 s).
      let aged = atBirth
      await f.until(
        async () => (aged = await readPending(f.db.pool)).oldestPendingAgeMs >= 500,
        30_000,
        'the row to age 500 ms',
      )
      // In step with the database's clock, not more.
      expect(aged.oldestPendingAgeMs).toBeLessThanOrEqual(
        (await databaseNow(f.db.pool)) - beforeCommit + ROUNDING_MS,
      )
      const { rows } = await f.db.pool.query<OutboxRow>('SELECT * FROM outbox_message WHERE id = $1', [id])
      const envelope = JSON.parse(toPublishable(rows[0] as OutboxRow, 'test').content.toString()) as {
        time: string
      }
      expect(envelope.time).toBe(occurredAt.toISOString())
    })
  }

  it(`when the producing process runs under faketime ${SKEW_S} s behind and ahead, then the oldest pending age is still measured from the database's clock`, async (context) => {
    if (!(await hasFaketime())) context.skip('faketime is not installed (apt-get install faketime)')
    for (const sign of [-1, 1]) {
      const shift = `${sign < 0 ? '-' : '+'}${SKEW_S}s`
      await f.db.pool.query('DELETE FROM outbox_message')
      const startedAt = Date.now()
      const beforeChild = await databaseNow(f.db.pool)
      const { stdout } = await run('faketime', ['-f', shift, 'node', '--import', 'tsx', child, f.db.url], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        timeout: 30_000,
      })
      const written = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
        id: string
        processNow: string
      }
      const { oldestPendingAgeMs, pending } = await readPending(f.db.pool)
      const afterRead = await databaseNow(f.db.pool)
      const endedAt = Date.now()
      // The child's clock really was shifted: its time was read between startedAt and endedAt by
      // this process's clock, so it is off by the shift however long the child took.
      const processNow = Date.parse(written.processNow)
      if (sign < 0) expect(endedAt - processNow).toBeGreaterThanOrEqual(SKEW_S * 1_000 - 1_000)
      else expect(processNow - startedAt).toBeGreaterThanOrEqual(SKEW_S * 1_000 - 1_000)
      expect(pending).toBe(1)
      // Born in the child since beforeChild, by the database's clock (its start-up included).
      expect(oldestPendingAgeMs).toBeGreaterThan(0)
      expect(oldestPendingAgeMs).toBeLessThanOrEqual(afterRead - beforeChild + ROUNDING_MS)
    }
  })
})
