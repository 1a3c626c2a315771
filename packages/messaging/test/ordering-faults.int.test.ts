import { createHash, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import amqp from 'amqplib'
import { AMQP_URL, useFixture } from '@saga/testkit'
import { createAmqpConnection, type AmqpConnection } from '../src/amqp/connection.js'
import { createConsumer, type Consumer } from '../src/inbox/consumer.js'
import { pgDatabase } from '../src/database.js'
import type { HandlerDefinition } from '../src/types.js'
import {
  closeConnectionsNamed,
  envelope,
  eventually,
  recordingHandler,
  type Happened,
  type InboxFixture,
  type Tx,
} from './inbox-fixture.js'
import { createOrderingFixture, ORDERED_BATCHING } from './ordering/fixture.js'

// Attacks on per-key order in batches (inbox/ordering-batch.ts, inbox/batch.ts), each on real
// PostgreSQL and RabbitMQ. Costs on a 2-core machine: the fault storm 3-5 s (400 messages; set
// FAULT_KEYS for more keys, FAULT_FAIL for the percentage of failing first attempts, FAULT_REPORT
// to print the counters), the requeue about 0.5 s, each message-shape case under 0.5 s, the
// settle window about 1 s.

const fixture = useFixture(async () => {
  const created = await createOrderingFixture('ordering_faults')
  // A terminated backend is reported on the pool for an idle client and on the client otherwise,
  // also in pg-pool's hand-over window before its new holder listens (node-postgres #2762):
  // listen on every client, as service-kit's database plugin does.
  created.db.pool.on('error', () => undefined)
  created.db.pool.on('connect', (client) => client.on('error', () => undefined))
  return created
})

/** Whether `id` is one of about `percent` in 100 (stable per id). */
const oneIn = (id: string, salt: string, percent: number): boolean =>
  createHash('sha1')
    .update(salt + id)
    .digest()[0]! %
    100 <
  percent

interface Named {
  consumer: Consumer
  connection: AmqpConnection
  name: string
}

/** Warnings and errors a consumer logged: their messages and the SQLSTATE of their error, if any. */
type Logged = Array<{ msg: string; code: string | undefined }>

function startNamed(
  f: InboxFixture,
  handler: HandlerDefinition<Tx, Happened>,
  name: string,
  logged: Logged,
): Named {
  const log = (obj: object, msg = ''): void => {
    logged.push({ msg, code: (obj as { err?: { code?: string } }).err?.code })
  }
  const connection = createAmqpConnection({ url: AMQP_URL, name })
  const consumer = createConsumer<Tx>({
    connection,
    database: pgDatabase(f.db.pool),
    handlers: [handler],
    queuePrefix: f.prefix,
    declare: { exchange: f.exchange },
    retryBaseMs: 20,
    retryMaxMs: 100,
    maxAttempts: 50,
    prefetch: 40,
    batchMax: 10,
    batchBudgetMs: Number.POSITIVE_INFINITY,
    concurrency: 4,
    logger: { debug: () => undefined, info: () => undefined, warn: log, error: log },
    ordering: { sweepMs: 300, startSettleMs: 60_000, putBackAgainMs: 1_000 },
  })
  consumer.start()
  connection.start()
  return { consumer, connection, name }
}

describe('per-key order in batches under faults', () => {
  it('when three batching consumers take overlapping keys out of order with duplicates, failing first attempts, terminated database backends and a closed broker connection, then every key is handled once each in order and nothing is left held but the gap', async () => {
    const f = fixture
    const handler = 'ordered-faults'
    f.adopt(handler)
    const keys = Array.from({ length: Number(process.env.FAULT_KEYS ?? 40) }, () => randomUUID())
    const gapKey = keys[0] as string
    const perKey = 10
    const ordered = {
      ...recordingHandler(handler, async (message) => {
        if (message.attempt === 1 && oneIn(message.id, 'fail', Number(process.env.FAULT_FAIL ?? 15)))
          throw new Error('first attempt fails')
        if (oneIn(message.id, 'slow', 20)) await new Promise((r) => setTimeout(r, 3))
      }),
      ordering: 'per-key' as const,
    }
    await f.declare(ordered)

    // Each key's sequences in pairs swapped (2, 1, 4, 3, ...): every key's first delivery is
    // sequence 2, so it starts settling and sequence 1 comes after; the gap key lacks 5.
    const published: Array<Record<string, unknown>> = []
    for (let pair = 0; pair < perKey / 2; pair += 1)
      for (const key of keys)
        for (const n of [2 * pair + 2, 2 * pair + 1]) {
          if (key === gapKey && n === 5) continue
          const body = envelope({ partitionkey: key, sequence: String(n), correlationid: key, data: { n } })
          published.push(body)
          await f.publish(body)
          const id = body.id as string
          if (oneIn(id, 'dup', 10)) await f.publish(body)
          if (oneIn(id, 'twin', 5)) {
            const twin = { ...body, id: randomUUID() }
            published.push(twin)
            await f.publish(twin)
          }
        }

    // All of it waits in the queue before the consumers start: their batches fill at once.
    const logged: Logged = []
    const consumers = ['a', 'b', 'c'].map((s) => startNamed(f, ordered, `${f.prefix}-${s}`, logged))
    // Meanwhile, every snapshot of the tables: no cursor of a key with held deliveries reads held = false.
    const unflagged: string[] = []
    let watching = true
    const watch = (async () => {
      while (watching) {
        const { rows } = await f.db.pool
          .query<{ key: string }>(
            `SELECT DISTINCT w.key FROM ordering_waiting w JOIN ordering_cursor c
             ON c.handler = w.handler AND c.producer = w.producer AND c.key = w.key WHERE NOT c.held`,
          )
          .catch(() => ({ rows: [] }))
        unflagged.push(...rows.map((row) => row.key))
      }
    })()
    const count = async (sql: string): Promise<number> =>
      (await f.db.pool.query<{ n: number }>(sql)).rows[0]?.n ?? 0
    const expected = keys.length * perKey - (perKey - 4)
    await eventually(
      'a third handled',
      async () =>
        (await count(`SELECT count(*)::int AS n FROM effect WHERE handler = '${handler}'`)) >= expected / 3,
    )
    await f.db.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    )
    expect(await closeConnectionsNamed(`${f.prefix}-b`)).toBe(1)
    await eventually(
      'two thirds handled',
      async () =>
        (await count(`SELECT count(*)::int AS n FROM effect WHERE handler = '${handler}'`)) >=
        (2 * expected) / 3,
    )
    await f.db.pool.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    )
    expect(await closeConnectionsNamed(`${f.prefix}-c`)).toBe(1)
    await eventually(
      'all but the gap handled, the gap held',
      async () =>
        (await count(`SELECT count(*)::int AS n FROM effect WHERE handler = '${handler}'`)) >= expected &&
        (await count(`SELECT count(*)::int AS n FROM ordering_waiting WHERE handler = '${handler}'`)) ===
          perKey - 5,
      60_000,
    )
    watching = false
    await watch
    for (const { consumer, connection } of consumers) {
      await consumer.stop()
      await connection.close()
    }
    const metrics = consumers.map(({ consumer }) => consumer.metrics())
    const sum = (pick: (m: (typeof metrics)[number]) => number): number =>
      metrics.reduce((total, m) => total + pick(m), 0)
    if (process.env.FAULT_REPORT)
      console.log({
        batches: sum((m) => m.batchesTotal),
        fallbacks: sum((m) => m.batchFallbacksTotal),
        waited: sum((m) => m.orderWaitedTotal),
        released: sum((m) => m.orderReleasedTotal),
        duplicates: sum((m) => m.duplicatesTotal),
        deadlocks: logged.filter(({ code }) => code === '40P01').length,
        logged: [...new Set(logged.map(({ msg }) => msg))],
      })
    // The paths under test were taken: shared transactions, holds released by their predecessor.
    expect(sum((m) => m.batchesTotal)).toBeGreaterThan(0)
    expect(sum((m) => m.orderReleasedTotal)).toBeGreaterThan(0)
    expect(unflagged).toEqual([])
    // Nothing was given up on: no dead letter, no blocked key (checked below), nothing unexpected logged.
    expect(sum((m) => m.deadLetteredTotal)).toBe(0)

    const { rows } = await f.db.pool.query<{ key: string; n: number }>(
      `SELECT w.key, e.n FROM effect e JOIN (SELECT DISTINCT ON (message_id) message_id, key FROM (VALUES ${published
        .map((b, i) => `($${2 * i + 1}::uuid, $${2 * i + 2})`)
        .join(', ')}) AS v (message_id, key)) w ON w.message_id = e.message_id ORDER BY e.id`,
      published.flatMap((b) => [b.id, b.partitionkey]),
    )
    // A twin (another id, same sequence) is handled in place of its original, never beside it.
    const byKey = new Map<string, number[]>()
    for (const row of rows) byKey.set(row.key, [...(byKey.get(row.key) ?? []), row.n])
    expect(rows).toHaveLength(expected)
    const all = Array.from({ length: perKey }, (_, i) => i + 1)
    for (const key of keys) expect([key, byKey.get(key)]).toEqual([key, key === gapKey ? [1, 2, 3, 4] : all])
    const { rows: cursors } = await f.db.pool.query<{
      key: string
      last_seq: string
      held: boolean
      blocked: boolean
    }>(
      'SELECT key, last_seq::text, held, blocked_by IS NOT NULL AS blocked FROM ordering_cursor WHERE handler = $1',
      [handler],
    )
    expect(cursors).toHaveLength(keys.length)
    for (const cursor of cursors)
      expect(cursor).toEqual({
        key: cursor.key,
        last_seq: cursor.key === gapKey ? '4' : String(perKey),
        held: cursor.key === gapKey,
        blocked: false,
      })
    expect(
      await count(
        `SELECT count(*)::int AS n FROM ordering_waiting WHERE handler = '${handler}' AND key <> '${gapKey}'`,
      ),
    ).toBe(0)
    expect(await f.ready(f.queue(handler))).toBe(0)
    expect(await f.drainDeadLetters(handler)).toHaveLength(0)
  }, 120_000)

  it("when an ordered message's partition key holds a NUL character, then it is dead-lettered as poison at once and the other keys of its batch are handled", async () => {
    const f = fixture
    const handler = 'ordered-nul'
    const ordered = { ...recordingHandler(handler), ordering: 'per-key' as const }
    await f.declare(ordered)
    const keys = Array.from({ length: 5 }, () => randomUUID())
    const poison = envelope({ partitionkey: 'nul\u0000key', sequence: '1', data: { n: 1 } })
    await f.publish(poison)
    for (const key of keys)
      await f.publish(envelope({ partitionkey: key, sequence: '1', correlationid: key }))
    const { consumer } = await f.startConsumer([ordered], ORDERED_BATCHING)
    await eventually('the other keys handled', async () => (await f.effects(handler)).length === keys.length)
    // Poison never reaches a handler: it is dead-lettered, not retried as if the database were down.
    await eventually('the NUL key dead-lettered', () => consumer.metrics().deadLetteredTotal === 1, 5_000)
    const dead = await f.drainDeadLetters(handler)
    expect(dead.map((m) => m.properties.messageId as unknown)).toEqual([poison.id])
  })

  it("when an ordered message's partition key holds a lone surrogate and shares a batch with other keys, then it is dead-lettered as poison, never acked unhandled as a duplicate", async () => {
    const f = fixture
    const handler = 'ordered-surrogate'
    const ordered = { ...recordingHandler(handler), ordering: 'per-key' as const }
    await f.declare(ordered)
    const keys = Array.from({ length: 12 }, () => randomUUID())
    // PostgreSQL gets the key as UTF-8, where a lone surrogate becomes U+FFFD: the cursor's key
    // then differs from the message's. Four such keys sit among the others, so batches take them.
    const odd = (i: number): Record<string, unknown> =>
      envelope({ partitionkey: `odd\ud800${randomUUID()}${i}`, sequence: '1', data: { n: 1 } })
    for (const [i, key] of keys.entries()) {
      if (i % 3 === 1) await f.publish(odd(i))
      await f.publish(envelope({ partitionkey: key, sequence: '1', correlationid: key }))
    }
    const { consumer } = await f.startConsumer([ordered], ORDERED_BATCHING)
    await eventually('the other keys handled', async () => (await f.effects(handler)).length >= keys.length)
    const settled = (): number => {
      const m = consumer.metrics()
      return m.handledTotal + m.deadLetteredTotal + m.duplicatesTotal
    }
    await eventually('every delivery settled', () => settled() === keys.length + 4)
    // Each odd one dead-lettered as poison; none acked as if handled before.
    expect(consumer.metrics().batchesTotal).toBeGreaterThan(0)
    expect(consumer.metrics().duplicatesTotal).toBe(0)
    expect(consumer.metrics().deadLetteredTotal).toBe(4)
    expect((await f.effects(handler)).length).toBe(keys.length)
  })

  it("when an ordered message's partition key is too long for a btree index, then it is dead-lettered as poison", async () => {
    const f = fixture
    const handler = 'ordered-long'
    const ordered = { ...recordingHandler(handler), ordering: 'per-key' as const }
    await f.declare(ordered)
    const keys = Array.from({ length: 6 }, () => randomUUID())
    // 300 UUIDs: 10.8 kB that do not compress; the cursor's primary key cannot index them (SQLSTATE
    // 54000), a failure before the handler ran, which the inbox takes for a database outage.
    const long = envelope({
      partitionkey: Array.from({ length: 300 }, () => randomUUID()).join(''),
      sequence: '1',
    })
    for (const [i, key] of keys.entries()) {
      if (i === 3) await f.publish(long)
      await f.publish(envelope({ partitionkey: key, sequence: '1', correlationid: key }))
    }
    const { consumer } = await f.startConsumer([ordered], ORDERED_BATCHING)
    await eventually('the other keys handled', async () => (await f.effects(handler)).length === keys.length)
    await eventually('the long key dead-lettered', () => consumer.metrics().deadLetteredTotal === 1, 5_000)
    expect((await f.drainDeadLetters(handler)).map((m) => m.properties.messageId as unknown)).toEqual([
      long.id,
    ])
  })

  it('when an early ordered delivery carries a header PostgreSQL cannot store (a NUL in jsonb), then it is dead-lettered, not retried forever as a database outage', async () => {
    const f = fixture
    const handler = 'ordered-header'
    const ordered = { ...recordingHandler(handler), ordering: 'per-key' as const }
    await f.declare(ordered)
    const { consumer } = await f.startConsumer([ordered], { ordering: { sweepMs: 600_000 } })
    const key = randomUUID()
    // Sequence 2 before 1: it is held, its AMQP properties stored as jsonb, which refuses U+0000.
    const early = envelope({ partitionkey: key, sequence: '2', correlationid: key, data: { n: 2 } })
    const connection = await amqp.connect(AMQP_URL)
    try {
      const channel = await connection.createConfirmChannel()
      channel.publish(f.exchange, 'test.happened', Buffer.from(JSON.stringify(early)), {
        persistent: true,
        contentType: 'application/json',
        messageId: early.id as string,
        headers: { 'x-note': 'a\u0000b' },
      })
      await channel.waitForConfirms()
    } finally {
      await connection.close()
    }
    await eventually('the early one dead-lettered', () => consumer.metrics().deadLetteredTotal === 1, 5_000)
    expect((await f.drainDeadLetters(handler)).map((m) => m.properties.messageId as unknown)).toEqual([
      early.id,
    ])
  })

  it("when a new key's sequence 1 waits in one consumer for a slot past the settle window while its sequence 2 is held in another, then 2 is handled and 1 is dead-lettered with the reason, neither handled out of order nor dropped as a duplicate", async () => {
    // The settle window is a timer on the cursor, blind to a delivery another instance has
    // received but not yet begun (waiting for a slot, a turn or its batch): a predecessor that
    // begins after the key started past it is late, and dead-lettered (inbox/ordering.ts).
    const f = fixture
    const handler = 'ordered-settle'
    const key = randomUUID()
    const blocker = randomUUID()
    let open = (): void => undefined
    const gate = new Promise<void>((resolve) => (open = resolve))
    let blocking = (): void => undefined
    const blocked = new Promise<void>((resolve) => (blocking = resolve))
    const ordered = {
      ...recordingHandler(handler, async (message) => {
        if (message.correlationId !== blocker) return
        blocking()
        await gate
      }),
      ordering: 'per-key' as const,
    }
    // A: one transaction at a time, two deliveries unacked at most, no batches.
    const a = await f.startConsumer([ordered], { concurrency: 1, prefetch: 2, batchMax: 1 })
    await f.publish(envelope({ partitionkey: blocker, sequence: '1', correlationid: blocker }))
    await blocked
    // Sequence 1 of the key reaches A (the handler has seen it) and waits for A's only slot.
    const first = envelope({ partitionkey: key, sequence: '1', correlationid: key, data: { n: 1 } })
    const second = envelope({ partitionkey: key, sequence: '2', correlationid: key, data: { n: 2 } })
    await f.publish(first)
    const b = await f.startConsumer([ordered], { ordering: { sweepMs: 100, startSettleMs: 500 } })
    // A's prefetch is full: sequence 2 goes to B, which has not seen the key: held, settling.
    await f.publish(second)
    await eventually(
      'B started the key past its settle window',
      () => b.consumer.metrics().orderSettledTotal === 1,
    )
    open()
    await eventually(
      'A dead-lettered the late sequence 1',
      () => a.consumer.metrics().deadLetteredTotal === 1,
    )
    const ofKey = (await f.effects(handler)).filter((row) => [first.id, second.id].includes(row.message_id))
    expect(ofKey.map((row) => row.n)).toEqual([2])
    const [late] = await f.drainDeadLetters(handler)
    expect(late?.properties.messageId).toBe(first.id)
    expect(String(late?.properties.headers?.['x-dead-letter-reason'])).toContain(
      "ordered message 1 came after its key's order had started at 2",
    )
  })

  it('when a key blocked by a dead-lettered message has it requeued while its successors are held and other keys flow in batches, then the key resumes in order and nothing stays held or flagged', async () => {
    const f = fixture
    const handler = 'ordered-requeue'
    const poisoned = randomUUID()
    const others = Array.from({ length: 8 }, () => randomUUID())
    let healed = false
    const ordered = {
      ...recordingHandler(handler, (message) => {
        if (!healed && message.correlationId === poisoned && message.payload.n === 2)
          throw new Error('poisoned')
      }),
      ordering: 'per-key' as const,
    }
    await f.declare(ordered)
    const keyOf = new Map<string, string>()
    const publishKeys = async (from: number, to: number): Promise<void> => {
      for (let n = from; n <= to; n += 1)
        for (const key of [poisoned, ...others]) {
          const body = envelope({ partitionkey: key, sequence: String(n), correlationid: key, data: { n } })
          keyOf.set(body.id as string, key)
          await f.publish(body)
        }
    }
    await publishKeys(1, 3)
    const { consumer } = await f.startConsumer([ordered], { ...ORDERED_BATCHING, maxAttempts: 2 })
    await eventually('the key blocked, its 3 held', async () => {
      const { rows } = await f.db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ordering_cursor c JOIN ordering_waiting w USING (handler, producer, key)
          WHERE c.handler = $1 AND c.key = $2 AND c.blocked_by IS NOT NULL AND c.held`,
        [handler, poisoned],
      )
      return rows[0]?.n === 1
    })
    const [dead] = await f.drainDeadLetters(handler)
    healed = true
    // The operator's requeue, while the key's 4 and 5 and every other key's arrive in batches.
    await f.publish(JSON.parse((dead as { content: Buffer }).content.toString()) as Record<string, unknown>)
    await publishKeys(4, 5)
    await eventually('every key handled to 5', async () => {
      const { rows } = await f.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM ordering_cursor WHERE handler = $1 AND last_seq = 5',
        [handler],
      )
      return rows[0]?.n === others.length + 1
    })
    // Each key's committed runs in order, once each (the poisoned 2's failed runs rolled back).
    const byKey = new Map<string, number[]>()
    for (const row of await f.effects(handler)) {
      const key = keyOf.get(row.message_id) as string
      byKey.set(key, [...(byKey.get(key) ?? []), row.n])
    }
    for (const key of [poisoned, ...others]) expect([key, byKey.get(key)]).toEqual([key, [1, 2, 3, 4, 5]])
    const { rows: cursors } = await f.db.pool.query<{ held: boolean; blocked: boolean }>(
      'SELECT held, blocked_by IS NOT NULL AS blocked FROM ordering_cursor WHERE handler = $1',
      [handler],
    )
    expect(cursors.every((c) => !c.held && !c.blocked)).toBe(true)
    const waiting = await f.db.pool.query('SELECT 1 FROM ordering_waiting WHERE handler = $1', [handler])
    expect(waiting.rows).toHaveLength(0)
    expect(consumer.metrics().batchesTotal).toBeGreaterThan(0)
  })
})
