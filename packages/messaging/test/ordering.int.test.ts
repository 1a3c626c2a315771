import type pg from 'pg'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { eventually } from './inbox-fixture.js'
import { startOrderedConsumer, type OrderedConsumerSettings } from './ordering/ordered-consumer.js'
import {
  createOrderingFixture,
  effectsByKey,
  orderedProducer,
  produce,
  startConsumerChild,
} from './ordering/fixture.js'

const fixture = useFixture(() => createOrderingFixture('ordering'))

const KEYS = Number(process.env.ORDERING_KEYS ?? 500)
const PER_KEY = 20
const LATE_KEYS = 40
const LATE_PER_KEY = 5

/** Handled inbox rows of `handler` (each message once). */
async function handled(pool: pg.Pool, handler: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(DISTINCT message_id)::int AS n FROM inbox_message WHERE handler = $1',
    [handler],
  )
  return rows[0]?.n ?? 0
}

describe('per-key order', () => {
  it(`when ${KEYS} keys x ${PER_KEY} messages go to two ordered consumers with random delays and failures, one SIGKILLed mid-run, then each key's messages are handled once each, in commit order`, async () => {
    const { db, exchange, prefix } = fixture
    const handler = 'ordered'
    fixture.adopt(handler)
    const settings = {
      amqpUrl: 'amqp://guest:guest@127.0.0.1:5672',
      exchange,
      prefix,
      handler,
      maxDelayMs: 3,
      failRate: 0.05,
    }
    const child = await startConsumerChild(db.url, { ...settings, name: `${prefix}-child` })
    const local = startOrderedConsumer(db.pool, { ...settings, name: `${prefix}-local` })
    const producer = orderedProducer(db.pool, exchange)
    await producer.start()
    try {
      const total = KEYS * PER_KEY
      const produced = produce(producer, KEYS, PER_KEY)
      const handledCount = async (): Promise<number> =>
        (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM effect')).rows[0]?.n ?? 0
      // Kill the child once a third is handled: it has deliveries in flight, retries waiting, held rows.
      await eventually('a third handled', async () => (await handledCount()) >= total / 3, 300_000)
      await child.kill()
      const keys = await produced
      await eventually(
        'every message handled',
        async () => {
          const { rows } = await db.pool.query<{ n: number }>(
            'SELECT count(DISTINCT message_id)::int AS n FROM inbox_message WHERE handler = $1',
            [handler],
          )
          return rows[0]?.n === total
        },
        600_000,
      )
      // A run that threw or was killed rolled its effect row back: every row is a committed run.
      expect(await handledCount()).toBe(total)
      const byKey = await effectsByKey(db.pool, handler)
      expect(byKey.size).toBe(KEYS)
      const expected = Array.from({ length: PER_KEY }, (_, i) => ({ n: i + 1, sequence: i + 1 }))
      for (const key of keys) expect(byKey.get(key)).toEqual(expected)
      const { rows: waiting } = await db.pool.query('SELECT 1 FROM ordering_waiting')
      expect(waiting).toHaveLength(0)
      // The path under test was taken: deliveries that came early were held, then released.
      const metrics = local.consumer.metrics()
      expect(metrics.orderWaitedTotal).toBeGreaterThan(0)
      expect(metrics.orderReleasedTotal).toBeGreaterThan(0)
      // Many keys' deliveries shared transactions (the consumer's default batchMax).
      expect(metrics.batchesTotal).toBeGreaterThan(0)
    } finally {
      await child.kill()
      await producer.stop()
      await local.consumer.stop()
      await local.connection.close()
    }
  }, 900_000)
})

describe('per-key order of a handler added later', () => {
  it(`when a producer numbered ${LATE_KEYS} keys before an ordered handler existed, then the handler, added later, handles each key's later messages in order from the first it sees, without a skip`, async () => {
    const { db, exchange, prefix } = fixture
    const base = { amqpUrl: 'amqp://guest:guest@127.0.0.1:5672', exchange, prefix, maxDelayMs: 2 }
    // An ordered handler there from the start (the producer's facts are consumed, so numbered).
    const early: OrderedConsumerSettings = { ...base, handler: 'early', failRate: 0, name: `${prefix}-early` }
    // The handler added later: random failures, a settle window well above a key's publish spread.
    const late: OrderedConsumerSettings = {
      ...base,
      handler: 'late',
      failRate: 0.05,
      name: `${prefix}-late`,
      startSettleMs: 1_500,
    }
    fixture.adopt('early')
    fixture.adopt('late')
    const first = startOrderedConsumer(db.pool, early)
    const producer = orderedProducer(db.pool, exchange)
    await producer.start()
    let added: ReturnType<typeof startOrderedConsumer> | undefined
    try {
      await eventually('early consuming', () => first.consumer.health().consuming)
      const keys = await produce(producer, LATE_KEYS, LATE_PER_KEY)
      const before = LATE_KEYS * LATE_PER_KEY
      await eventually('the first messages handled', async () => (await handled(db.pool, 'early')) === before)
      added = startOrderedConsumer(db.pool, late)
      const { consumer } = added
      await eventually('late consuming', () => consumer.health().consuming)
      await produce(producer, keys, LATE_PER_KEY, 8, LATE_PER_KEY + 1)
      await eventually(
        'the later messages handled by the added handler',
        async () => (await handled(db.pool, 'late')) === before,
        120_000,
      )
      const later = Array.from({ length: LATE_PER_KEY }, (_, i) => LATE_PER_KEY + 1 + i)
      const byKey = await effectsByKey(db.pool, 'late')
      for (const key of keys) expect(byKey.get(key)).toEqual(later.map((n) => ({ n, sequence: n })))
      // Every key started at its first message seen, by the sweep after the settle window: no gap, no skip.
      expect(consumer.metrics().orderSettledTotal).toBe(LATE_KEYS)
      expect(first.consumer.metrics().orderSettledTotal).toBe(0)
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ordering_cursor
          WHERE handler = 'late' AND last_seq = $1 AND settling_since IS NULL AND blocked_by IS NULL`,
        [2 * LATE_PER_KEY],
      )
      expect(rows[0]?.n).toBe(LATE_KEYS)
      const { rows: waiting } = await db.pool.query('SELECT 1 FROM ordering_waiting')
      expect(waiting).toHaveLength(0)
    } finally {
      await producer.stop()
      for (const running of [first, added]) {
        await running?.consumer.stop()
        await running?.connection.close()
      }
    }
  }, 300_000)
})
