import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import pg from 'pg'
import { pgDatabase } from '../src/database.js'
import type { Database, MessageContract } from '../src/types.js'
import {
  closeConnectionsNamed,
  collect,
  createInboxFixture,
  envelope,
  eventually,
  happened,
  recordingHandler,
  type Happened,
  type InboxFixture,
  type Tx,
} from './inbox-fixture.js'

const fixture = useFixture(() => createInboxFixture('batch'))

/** A gate handlers wait at until it is opened; counts who waits. */
function gate(): { wait: () => Promise<void>; open: () => void; waiting: () => number } {
  let open = (): void => undefined
  const opened = new Promise<void>((resolve) => (open = resolve))
  let waiting = 0
  return {
    async wait() {
      waiting += 1
      await opened
      waiting -= 1
    },
    open,
    waiting: () => waiting,
  }
}

/** `pgDatabase` on the fixture's pool, counting the transactions that committed, by kind. */
function countingDatabase(): Database<Tx> & { commits: { single: number; batch: number } } {
  const inner = pgDatabase(fixture.db.pool)
  const commits = { single: 0, batch: 0 }
  return {
    commits,
    transaction: (fn) => inner.transaction(fn),
    async inboxTransaction(entry, fn) {
      const outcome = await inner.inboxTransaction!(entry, fn)
      commits.single += 1
      return outcome
    },
    async inboxBatchTransaction(entries, fn) {
      const result = await inner.inboxBatchTransaction!(entries, fn)
      commits.batch += 1
      return result
    },
  }
}

/** The effect rows of `handler` by message id: how many times each message took effect. */
async function effectsById(handler: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>()
  for (const row of await fixture.effects(handler))
    counts.set(row.message_id, (counts.get(row.message_id) ?? 0) + 1)
  return counts
}

/**
 * Starts `handler`'s consumer with one transaction slot, holds its first delivery (n = 0) in the
 * handler, publishes `bodies` meanwhile and waits until the broker handed them all over, so they
 * wait together for the slot and form batches when `release()` lets the first one finish. The held
 * first handler is slow, which would size the next batches at one (`batchBudgetMs`): these
 * settings size them by `batchMax` alone unless `options` says otherwise.
 */
async function backlogBehindFirst(
  name: string,
  bodies: Array<Record<string, unknown>>,
  options: Parameters<InboxFixture['startConsumer']>[1] = {},
  behaviour: Parameters<typeof recordingHandler>[1] = () => undefined,
) {
  const first = gate()
  const handler = recordingHandler(name, async (message, tx) => {
    if (message.payload.n === 0) await first.wait()
    await behaviour(message, tx)
  })
  const settings = { concurrency: 1, prefetch: 40, batchMax: 20, batchBudgetMs: Infinity, ...options }
  const running = await fixture.startConsumer([handler], settings)
  const head = envelope({ data: { n: 0 } })
  await fixture.publish(head)
  await eventually('the first delivery held', () => first.waiting() === 1)
  for (const body of bodies) await fixture.publish(body)
  // Everything the prefetch window allows is at the consumer; the rest stays ready in the queue.
  const left = Math.max(0, bodies.length + 1 - settings.prefetch)
  await eventually(
    'the backlog delivered to the consumer',
    async () => (await fixture.ready(fixture.queue(name))) === left,
  )
  return { ...running, head, release: first.open }
}

describe('consumer batches: inbox commits shared across deliveries of one queue', () => {
  it('when a backlog waits for the slot, then it is handled in batches, each message once, in far fewer transactions', async () => {
    const database = countingDatabase()
    const bodies = Array.from({ length: 60 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const { consumer, connection, signals, release, head } = await backlogBehindFirst('backlog', bodies, {
      database,
    })
    const handled = collect(signals, 'handled')

    release()

    // The handled signal comes before the delivery leaves the in-flight count: wait for both.
    await eventually(
      'all 61 handled and none in flight',
      () => handled.length === 61 && consumer.metrics().byHandler.backlog?.inFlight === 0,
    )
    const effects = await effectsById('backlog')
    expect(effects.size).toBe(61)
    expect([...effects.values()].every((count) => count === 1)).toBe(true)
    expect(new Set(handled.map((s) => s.id))).toEqual(new Set([head.id, ...bodies.map((b) => b.id)]))
    // 39 wait behind the first (prefetch 40), the rest arrive while batches run: at most 20 each.
    expect(database.commits.single + database.commits.batch).toBeLessThanOrEqual(8)
    expect(database.commits.batch).toBeGreaterThanOrEqual(3)
    const counters = consumer.metrics().byHandler.backlog
    expect(counters).toMatchObject({ handledTotal: 61, batchesTotal: database.commits.batch, inFlight: 0 })
    expect(counters?.batchFallbacksTotal).toBe(0)
    expect(await fixture.ready(fixture.queue('backlog'))).toBe(0)
    await consumer.stop()
    await connection.close()
  })

  it('when one message of a batch fails, then the others commit once and it retries and dead-letters as when alone', async () => {
    const database = countingDatabase()
    const bodies = Array.from({ length: 10 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const poison = bodies[4] as { id: string }
    const runs = new Map<string, number>()
    const { consumer, connection, signals, release } = await backlogBehindFirst(
      'one-fails',
      bodies,
      { database, maxAttempts: 2 },
      (message) => {
        runs.set(message.id, (runs.get(message.id) ?? 0) + 1)
        if (message.id === poison.id) throw new Error('card processor says no')
      },
    )
    const retrying = collect(signals, 'retrying')
    const deadLettered = signals.waitFor('deadLettered', (s) => s.id === poison.id)

    release()

    expect((await deadLettered).reason).toBe('handler failed after 2 attempts: card processor says no')
    // The consumer's own count, not the effect rows: a COMMIT is visible to another connection before
    // the consumer has its reply and counts the delivery handled.
    await eventually(
      'the nine others handled',
      () => consumer.metrics().byHandler['one-fails']?.handledTotal === 10,
    )
    const effects = await effectsById('one-fails')
    expect(effects.has(poison.id)).toBe(false)
    expect([...effects.values()].every((count) => count === 1)).toBe(true)
    // The batch run does not count as an attempt: attempt 1 alone is retried, attempt 2 dead-letters.
    expect(retrying.filter((s) => s.id === poison.id).map((s) => s.attempt)).toEqual([1])
    expect(runs.get(poison.id)).toBe(3)
    expect(consumer.metrics().byHandler['one-fails']).toMatchObject({
      handledTotal: 10,
      deadLetteredTotal: 1,
      batchFallbacksTotal: 1,
    })
    const copies = await fixture.drainDeadLetters('one-fails')
    expect(copies.map((copy) => copy.properties.messageId as unknown)).toEqual([poison.id])
    expect(await fixture.ready(fixture.queue('one-fails'))).toBe(0)
    await consumer.stop()
    await connection.close()
  })

  it('when a batch holds messages the inbox already saw, then they are skipped and acked and the others handled once', async () => {
    const database = countingDatabase()
    const bodies = Array.from({ length: 8 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const seen = [bodies[1], bodies[5]] as Array<{ id: string }>
    for (const { id } of seen)
      await fixture.db.pool.query('INSERT INTO inbox_message (message_id, handler) VALUES ($1, $2)', [
        id,
        'dupes',
      ])
    const { consumer, connection, signals, release } = await backlogBehindFirst('dupes', bodies, { database })
    const duplicates = collect(signals, 'duplicate')
    const handled = collect(signals, 'handled')

    release()

    await eventually(
      'seven handled and two duplicates',
      () => handled.length === 7 && duplicates.length === 2,
    )
    expect(duplicates.map((s) => s.id).sort()).toEqual(seen.map((s) => s.id).sort())
    const effects = await effectsById('dupes')
    expect(effects.size).toBe(7)
    expect(seen.some(({ id }) => effects.has(id))).toBe(false)
    expect(database.commits.batch).toBeGreaterThanOrEqual(1)
    expect(consumer.metrics().byHandler.dupes).toMatchObject({ handledTotal: 7, duplicatesTotal: 2 })
    expect(await fixture.ready(fixture.queue('dupes'))).toBe(0)
    await consumer.stop()
    await connection.close()
  })

  it('when the channel closes while a batch runs and the batch then fails, then nothing of it was acked: every message is redelivered and takes effect once', async () => {
    const inBatch = gate()
    let closed = false
    const bodies = Array.from({ length: 9 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const { consumer, connection, signals, release } = await backlogBehindFirst(
      'closed-mid-batch',
      bodies,
      { maxAttempts: 5 },
      async (message) => {
        if (message.payload.n !== 5 || closed) return
        await inBatch.wait()
        throw new Error('the batch fails after its channel closed')
      },
    )
    const handled = collect(signals, 'handled')

    release()
    await eventually('the batch holding message 5', () => inBatch.waiting() === 1)
    // Heard from the connection, not polled: on a loaded broker the close's HTTP answer can come
    // after the consumer has reconnected, and a poll would never see it gone.
    const gone = new Promise<void>((resolve) => connection.onLost(() => resolve()))
    expect(await closeConnectionsNamed(`${fixture.prefix}-consumer`, 'closed by the batch test')).toBe(1)
    await gone
    await eventually('consuming again', () => consumer.health().consuming)
    closed = true
    inBatch.open()

    await eventually(
      'all ten in effect',
      async () => (await effectsById('closed-mid-batch')).size === 10,
      20_000,
    )
    const effects = await effectsById('closed-mid-batch')
    expect([...effects.values()].every((count) => count === 1)).toBe(true)
    expect(new Set(handled.map((s) => s.id)).size).toBe(10)
    await eventually(
      'the queue empty',
      async () => (await fixture.ready(fixture.queue('closed-mid-batch'))) === 0,
    )
    await consumer.stop()
    await connection.close()
  })

  it('when the channel closes while a batch commits, then the redelivered copies are duplicates and nothing takes effect twice', async () => {
    const inBatch = gate()
    let opened = false
    const bodies = Array.from({ length: 9 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const { consumer, connection, signals, release } = await backlogBehindFirst(
      'closed-at-commit',
      bodies,
      {},
      (message) => (message.payload.n === 5 && !opened ? inBatch.wait() : undefined),
    )
    const duplicates = collect(signals, 'duplicate')

    release()
    await eventually('the batch holding message 5', () => inBatch.waiting() === 1)
    expect(await closeConnectionsNamed(`${fixture.prefix}-consumer`, 'closed by the batch test')).toBe(1)
    opened = true
    inBatch.open()

    // Its acks went to a closed channel: the broker redelivers the batch, the inbox knows it.
    await eventually('the batch of nine redelivered as duplicates', () => duplicates.length === 9, 20_000)
    await eventually(
      'the queue empty',
      async () => (await fixture.ready(fixture.queue('closed-at-commit'))) === 0,
    )
    await eventually(
      'nothing in flight',
      () => consumer.metrics().byHandler['closed-at-commit']?.inFlight === 0,
    )
    const effects = await effectsById('closed-at-commit')
    expect(effects.size).toBe(10)
    expect([...effects.values()].every((count) => count === 1)).toBe(true)
    await consumer.stop()
    await connection.close()
  })
})

/** A second message type on its own routing key, so two queues can get messages in different orders. */
const other: MessageContract<Happened> = { ...happened, type: 'test.other.v1', routingKey: 'test.other' }

describe('consumer batches and per-order locks', () => {
  it('when two batches take per-order advisory locks of the same two orders delivered in opposite orders, then they do not deadlock', async () => {
    const warmUp = gate()
    const lockThenLinger = async (message: { correlationId: string; payload: Happened }, tx: Tx) => {
      if (message.payload.n === 0) return warmUp.wait()
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))', [message.correlationId])
      // Long enough that the other batch takes its first lock meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
    const a = recordingHandler('locks-a', lockThenLinger)
    const b = recordingHandler('locks-b', lockThenLinger, other)
    const deadlocks = async (): Promise<number> =>
      (
        await fixture.db.pool.query<{ n: number }>(
          'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
        )
      ).rows[0]!.n
    const before = await deadlocks()
    const { consumer, connection, signals } = await fixture.startConsumer([a, b], {
      concurrency: 2,
      prefetch: 10,
      // The handlers linger: sized by their pace each would run alone, and the test prove nothing.
      batchBudgetMs: Infinity,
    })
    const handled = collect(signals, 'handled')
    await fixture.publish(envelope({ data: { n: 0 } }), happened.routingKey)
    await fixture.publish(envelope({ type: other.type, data: { n: 0 } }), other.routingKey)
    await eventually('both slots held', () => warmUp.waiting() === 2)
    const [order1, order2] = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002']
    await fixture.publish(envelope({ correlationid: order1, data: { n: 1 } }), happened.routingKey)
    await fixture.publish(envelope({ correlationid: order2, data: { n: 2 } }), happened.routingKey)
    await fixture.publish(
      envelope({ type: other.type, correlationid: order2, data: { n: 3 } }),
      other.routingKey,
    )
    await fixture.publish(
      envelope({ type: other.type, correlationid: order1, data: { n: 4 } }),
      other.routingKey,
    )
    await eventually(
      'all delivered',
      async () =>
        (await fixture.ready(fixture.queue('locks-a'))) === 0 &&
        (await fixture.ready(fixture.queue('locks-b'))) === 0,
    )

    warmUp.open()

    await eventually('all six handled', () => handled.length === 6, 15_000)
    const metrics = consumer.metrics().byHandler
    // Both pairs ran as batches (else the test proves nothing), side by side, and none rolled back.
    expect(metrics['locks-a']).toMatchObject({ batchesTotal: 1, batchFallbacksTotal: 0, retriedTotal: 0 })
    expect(metrics['locks-b']).toMatchObject({ batchesTotal: 1, batchFallbacksTotal: 0, retriedTotal: 0 })
    expect(await deadlocks()).toBe(before)
    await consumer.stop()
    await connection.close()
  })
})

/**
 * Handles one warm-up message (n = 0) of `queue`, holds four transaction slots with deliveries of
 * the other queue waiting at `blocker`, then publishes messages 1 to `backlog` of `queue` and waits
 * until the broker handed them all to the consumer: a backlog that meets four free slots at once
 * when `blocker` opens.
 */
async function backlogBehindFourSlots(
  queue: string,
  handled: readonly unknown[],
  blocker: ReturnType<typeof gate>,
  backlog: number,
): Promise<void> {
  await fixture.publish(envelope({ data: { n: 0 } }))
  await eventually('the warm-up handled', () => handled.length === 1)
  for (let n = 1; n <= 4; n += 1)
    await fixture.publish(envelope({ type: other.type, data: { n } }), other.routingKey)
  await eventually('the four slots held', () => blocker.waiting() === 4)
  for (let n = 1; n <= backlog; n += 1) await fixture.publish(envelope({ data: { n } }))
  await eventually(
    'the backlog delivered to the consumer',
    async () => (await fixture.ready(fixture.queue(queue))) === 0,
  )
}

describe("consumer batches: sized by the handlers' pace (batchBudgetMs)", () => {
  it('when the handler is slower than the budget, then a backlog runs one per transaction side by side', async () => {
    const database = countingDatabase()
    const held = gate()
    const blocker = gate()
    const holdSlots = recordingHandler('slow-blocker', () => blocker.wait(), other)
    const slow = recordingHandler('slow-pace', async (message) => {
      // The warm-up message is what a slow handler does: 500 ms of work, more than the 20 ms budget
      // and than half of ten transactions' overhead unless a transaction took 100 ms (batchSize).
      if (message.payload.n === 0) await new Promise((resolve) => setTimeout(resolve, 500))
      else await held.wait()
    })
    const { consumer, connection, signals } = await fixture.startConsumer([holdSlots, slow], {
      database,
      concurrency: 4,
      prefetch: 40,
      batchMax: 20,
      batchBudgetMs: 20,
    })
    const handled = collect(signals, 'handled')
    // The four slots held by the other queue, so the backlog waits for them all at once.
    await backlogBehindFourSlots('slow-pace', handled, blocker, 8)

    blocker.open()

    // Four slow handlers inside at once: four transactions (a batch runs its handlers in turn).
    await eventually('four slow handlers running at once', () => held.waiting() === 4)
    held.open()
    await eventually('all thirteen handled', () => handled.length === 13)
    expect(database.commits).toEqual({ single: 13, batch: 0 })
    expect(consumer.metrics().byHandler['slow-pace']).toMatchObject({ handledTotal: 9, batchesTotal: 0 })
    expect(await effectsById('slow-pace')).toHaveProperty('size', 9)
    await consumer.stop()
    await connection.close()
  })

  it('when the handler is fast, then a backlog still shares transactions', async () => {
    const database = countingDatabase()
    const blocker = gate()
    const holdSlot = recordingHandler('pace-blocker', () => blocker.wait(), other)
    const fast = recordingHandler('fast-pace')
    const { consumer, connection, signals } = await fixture.startConsumer([holdSlot, fast], {
      database,
      concurrency: 1,
      prefetch: 40,
      batchMax: 20,
      batchBudgetMs: 20,
    })
    const handled = collect(signals, 'handled')
    // Ten fast handlers time the queue's pace before the backlog.
    for (let n = 1; n <= 10; n += 1) await fixture.publish(envelope({ data: { n } }))
    await eventually('the warm-up handled', () => handled.length === 10)
    await fixture.publish(envelope({ type: other.type, data: { n: 0 } }), other.routingKey)
    await eventually('the only slot held by the other queue', () => blocker.waiting() === 1)
    for (let n = 11; n <= 40; n += 1) await fixture.publish(envelope({ data: { n } }))
    await eventually(
      'the backlog delivered to the consumer',
      async () => (await fixture.ready(fixture.queue('fast-pace'))) === 0,
    )
    const before = { ...database.commits }

    blocker.open()

    await eventually('all handled', () => handled.length === 41)
    const fastCounters = consumer.metrics().byHandler['fast-pace']
    expect(fastCounters).toMatchObject({ handledTotal: 40 })
    expect(fastCounters?.batchesTotal).toBeGreaterThanOrEqual(1)
    // 30 deliveries and the blocker's one in far fewer transactions than one each.
    const after = database.commits.single + database.commits.batch - before.single - before.batch
    expect(after).toBeLessThan(16)
    await consumer.stop()
    await connection.close()
  })
  it('when more wait than one batch takes, then those beyond it run alone on the free slots while it runs', async () => {
    const database = countingDatabase()
    const held = gate()
    const blocker = gate()
    const holdSlots = recordingHandler('spread-blocker', () => blocker.wait(), other)
    const spread = recordingHandler('spread', async (message) => {
      if (message.payload.n > 0) await held.wait()
    })
    // A budget that fits five fast handlers whatever the machine's load: batches of batchMax (5).
    const { consumer, connection, signals } = await fixture.startConsumer([holdSlots, spread], {
      database,
      concurrency: 4,
      prefetch: 40,
      batchMax: 5,
      batchBudgetMs: 10_000,
    })
    const handled = collect(signals, 'handled')
    await backlogBehindFourSlots('spread', handled, blocker, 20)

    blocker.open()

    // One batch of five holds a slot (its first handler waits at the gate); three deliveries
    // beyond the next batch wait there too, each alone on one of the other slots.
    await eventually('four handlers running at once', () => held.waiting() === 4)
    expect(database.commits.batch).toBe(0)
    held.open()
    await eventually('all twenty-five handled', () => handled.length === 25)
    const counters = consumer.metrics().byHandler.spread
    expect(counters).toMatchObject({ handledTotal: 21, batchFallbacksTotal: 0 })
    expect(counters?.batchesTotal).toBeGreaterThanOrEqual(1)
    expect([...(await effectsById('spread')).values()].every((count) => count === 1)).toBe(true)
    expect(await effectsById('spread')).toHaveProperty('size', 21)
    await consumer.stop()
    await connection.close()
  })
})

describe('consumer batches: settings', () => {
  it('when batchBudgetMs is not more than 0, then createConsumer refuses it', async () => {
    await expect(
      fixture.startConsumer([recordingHandler('bad-budget')], { batchBudgetMs: 0 }),
    ).rejects.toThrow('batchBudgetMs must be more than 0, got 0')
  })

  it('when batchMax is more than half the prefetch, then createConsumer refuses it', async () => {
    await expect(
      fixture.startConsumer([recordingHandler('bad-batch')], { prefetch: 10, batchMax: 6 }),
    ).rejects.toThrow('prefetch (10) must be at least twice batchMax (6)')
  })

  it('when batchWaitMs is set and two deliveries wait, then the slot waits for more and they join the same batch', async () => {
    const database = countingDatabase()
    const early = [envelope({ data: { n: 1 } }), envelope({ data: { n: 2 } })]
    const { consumer, connection, signals, release } = await backlogBehindFirst('wait-window', early, {
      database,
      batchWaitMs: 1_500,
    })
    const handled = collect(signals, 'handled')

    release()
    // Published while the granted slot waits for company (each publish waits for its confirm).
    for (let n = 3; n <= 5; n += 1) await fixture.publish(envelope({ data: { n } }))

    await eventually('all six handled', () => handled.length === 6)
    expect(database.commits).toEqual({ single: 1, batch: 1 })
    expect(consumer.metrics().byHandler['wait-window']?.batchesTotal).toBe(1)
    await consumer.stop()
    await connection.close()
  })

  it('when the database cannot batch (no inboxBatchTransaction), then every delivery has its own transaction', async () => {
    const inner = pgDatabase(fixture.db.pool)
    let singles = 0
    const database: Database<pg.PoolClient> = {
      transaction: (fn) => inner.transaction(fn),
      async inboxTransaction(entry, fn) {
        singles += 1
        return inner.inboxTransaction!(entry, fn)
      },
    }
    const bodies = Array.from({ length: 6 }, (_, i) => envelope({ data: { n: i + 1 } }))
    const { consumer, connection, signals, release } = await backlogBehindFirst('no-batch', bodies, {
      database,
    })
    const handled = collect(signals, 'handled')

    release()

    await eventually('all seven handled', () => handled.length === 7)
    expect(singles).toBe(7)
    expect(consumer.metrics().byHandler['no-batch']?.batchesTotal).toBe(0)
    await consumer.stop()
    await connection.close()
  })
})
