import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import { envelope, eventually, recordingHandler, type InboxFixture } from './inbox-fixture.js'
import { createOrderingFixture, ORDERED_BATCHING } from './ordering/fixture.js'

// Per-key order in batches (inbox/ordering-batch.ts): many keys' deliveries share a transaction,
// early ones are held and released by their predecessor's commit, a poisoned one blocks only its
// key. About 3 s.

const fixture = useFixture(() => createOrderingFixture('ordering_batch'))

/** Publishes sequence `sequence` of `key` (payload `n` = the sequence); returns its message id. */
async function publishSequenced(f: InboxFixture, key: string, sequence: number): Promise<string> {
  const id = randomUUID()
  await f.publish(
    envelope({
      id,
      partitionkey: key,
      sequence: String(sequence),
      correlationid: key,
      data: { n: sequence },
    }),
  )
  return id
}

/** Each key's handled `n`s in the order they were committed, by the message ids `keyOf` maps. */
async function handledByKey(
  f: InboxFixture,
  handler: string,
  keyOf: Map<string, string>,
): Promise<Map<string, number[]>> {
  const byKey = new Map<string, number[]>()
  for (const row of await f.effects(handler)) {
    const key = keyOf.get(row.message_id) as string
    byKey.set(key, [...(byKey.get(key) ?? []), row.n])
  }
  return byKey
}

describe('per-key order in batches', () => {
  it("when one key's messages come as 1, 4, 3, 2 among ten keys in order, then every key is handled in order, the early ones released by their predecessor (no sweep), and no cursor is left holding", async () => {
    const f = fixture
    const handler = 'ordered-batch'
    const keyOf = new Map<string, string>()
    const ordered = { ...recordingHandler(handler), ordering: 'per-key' as const }
    await f.declare(ordered)
    const late = randomUUID()
    const others = Array.from({ length: 10 }, () => randomUUID())
    // The queue's order: late 1, then the other keys interleaved with late 4, 3, 2.
    keyOf.set(await publishSequenced(f, late, 1), late)
    for (let n = 1; n <= 4; n += 1) {
      for (const key of others) keyOf.set(await publishSequenced(f, key, n), key)
      if (n > 1) keyOf.set(await publishSequenced(f, late, 6 - n), late)
    }
    const { consumer } = await f.startConsumer([ordered], ORDERED_BATCHING)
    await eventually('every message handled', async () => (await f.effects(handler)).length === 44)

    const byKey = await handledByKey(f, handler, keyOf)
    for (const key of [late, ...others]) expect(byKey.get(key)).toEqual([1, 2, 3, 4])
    const metrics = consumer.metrics()
    expect(metrics.batchesTotal).toBeGreaterThan(0)
    expect(metrics.orderWaitedTotal).toBeGreaterThanOrEqual(2)
    expect(metrics.orderReleasedTotal).toBeGreaterThanOrEqual(2)
    const { rows } = await f.db.pool.query<{ key: string; last_seq: string; held: boolean }>(
      'SELECT key, last_seq::text, held FROM ordering_cursor WHERE handler = $1',
      [handler],
    )
    expect(rows).toHaveLength(11)
    for (const row of rows) expect(row).toEqual({ key: row.key, last_seq: '4', held: false })
    expect((await f.db.pool.query('SELECT 1 FROM ordering_waiting')).rows).toHaveLength(0)
  })

  it("when one key's message 2 always throws in a batch with other keys, then the message is dead-lettered (its batch, if it was in one, falls back) and blocks only its key, and the other keys are handled in order once each", async () => {
    const f = fixture
    const handler = 'ordered-poison'
    const keyOf = new Map<string, string>()
    const poisoned = randomUUID()
    const others = Array.from({ length: 8 }, () => randomUUID())
    let blocker = ''
    const throwing = {
      ...recordingHandler(handler, (message) => {
        if (keyOf.get(message.id) === poisoned && message.payload.n === 2) throw new Error('poisoned')
      }),
      ordering: 'per-key' as const,
    }
    await f.declare(throwing)
    for (let n = 1; n <= 4; n += 1)
      for (const key of [poisoned, ...others]) {
        const id = await publishSequenced(f, key, n)
        keyOf.set(id, key)
        if (key === poisoned && n === 2) blocker = id
      }
    const { consumer } = await f.startConsumer([throwing], { ...ORDERED_BATCHING, maxAttempts: 2 })
    await eventually('the key blocked', async () => {
      const { rows } = await f.db.pool.query<{ blocked_by: string | null }>(
        'SELECT blocked_by::text FROM ordering_cursor WHERE handler = $1 AND key = $2',
        [handler, poisoned],
      )
      return rows[0]?.blocked_by === blocker
    })
    // Every other key's four, and the poisoned key's first; runs that threw were rolled back.
    await eventually('the other keys handled', async () => (await f.effects(handler)).length === 33)
    await eventually("the poisoned key's later two held", async () => {
      const { rows } = await f.db.pool.query('SELECT 1 FROM ordering_waiting WHERE key = $1', [poisoned])
      return rows.length === 2
    })
    const byKey = await handledByKey(f, handler, keyOf)
    for (const key of others) expect(byKey.get(key)).toEqual([1, 2, 3, 4])
    expect(byKey.get(poisoned)).toEqual([1])
    expect(consumer.metrics().batchesTotal).toBeGreaterThan(0)
    expect(await f.drainDeadLetters(handler)).toHaveLength(1)
  })
})
