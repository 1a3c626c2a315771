import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { toPublishable } from '../src/outbox/envelope.js'
import { readPending } from '../src/outbox/stats.js'
import type { OutboxRow } from '../src/outbox/envelope.js'
import { relayFixture } from './relay-fixture.js'

const run = promisify(execFile)
const child = fileURLToPath(new URL('./enqueue-with-process-clock.ts', import.meta.url))
const SKEW_S = 120

async function hasFaketime(): Promise<boolean> {
  return run('faketime', ['-f', '+0', 'true']).then(
    () => true,
    () => false,
  )
}

// A row's time and its age must come from one clock, the database's: with the service's clock for
// the time, a process 120 s behind would write rows 120 s old at birth, and one 120 s ahead rows of
// age -119.5 s shown as 0.
describe('outbox: one clock judges an age', () => {
  const f = useFixture(() => relayFixture('clock_skew'))

  for (const [label, offset] of [
    ['behind', -SKEW_S],
    ['ahead', SKEW_S],
  ] as const) {
    it(`when a producer's clock is ${SKEW_S} s ${label} (injected), then its row is young at birth, ages in step with the database, and keeps the producer's time as CloudEvents time`, async () => {
      await f.db.pool.query('DELETE FROM outbox_message')
      const occurredAt = new Date(Date.now() + offset * 1_000)
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
      expect(atBirth.oldestPendingAgeMs).toBeLessThan(2_000)
      const later = Date.now() + 600
      await f.until(() => Date.now() > later, 2_000, '600 ms')
      const aged = await readPending(f.db.pool)
      expect(aged.oldestPendingAgeMs).toBeGreaterThanOrEqual(500)
      expect(aged.oldestPendingAgeMs).toBeLessThan(atBirth.oldestPendingAgeMs + 3_000)
      const { rows } = await f.db.pool.query<OutboxRow>('SELECT * FROM outbox_message WHERE id = $1', [id])
      const envelope = JSON.parse(toPublishable(rows[0] as OutboxRow, 'test').content.toString()) as {
        time: string
      }
      expect(envelope.time).toBe(occurredAt.toISOString())
    })
  }

  it(`when the producing process runs under faketime ${SKEW_S} s behind and ahead, then the oldest pending age is still measured from the database's clock`, async (context) => {
    if (!(await hasFaketime())) context.skip('faketime is not installed (apt-get install faketime)')
    for (const shift of [`-${SKEW_S}s`, `+${SKEW_S}s`]) {
      await f.db.pool.query('DELETE FROM outbox_message')
      const { stdout } = await run('faketime', ['-f', shift, 'node', '--import', 'tsx', child, f.db.url], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
        timeout: 30_000,
      })
      const written = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
        id: string
        processNow: string
      }
      // The child's clock really was shifted.
      expect(Math.abs(Date.parse(written.processNow) - Date.now())).toBeGreaterThan((SKEW_S - 30) * 1_000)
      const { oldestPendingAgeMs, pending } = await readPending(f.db.pool)
      expect(pending).toBe(1)
      // Born in the child a moment ago (its start-up included), by the database's clock.
      expect(oldestPendingAgeMs).toBeGreaterThan(0)
      expect(oldestPendingAgeMs).toBeLessThan(15_000)
    }
  })
})
