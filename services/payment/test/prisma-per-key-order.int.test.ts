/**
 * Per-key order over `prismaDatabase`: ordered handlers whose transactions are Prisma 7 interactive
 * transactions of a real PrismaClient over @prisma/adapter-pg (no Rust engine). Such a database has
 * neither `beginWith` nor `inboxBatchTransaction`, so the consumer takes the generic path: the
 * cursor's move, the inbox row, the holds, the drains and the blocks each go as one parameterised
 * statement through `$queryRawUnsafe`/`$executeRawUnsafe` (packages/messaging's ordering tests
 * cover `pgDatabase`). The producer enqueues through Prisma too (`NEXT_SEQUENCE` on that path).
 * Among them, a drained held delivery's body: Prisma reads `bytea` as a plain Uint8Array, which the
 * drain turns into a Buffer before parsing it or putting it back (`heldRow` in ordering-drain.ts).
 *
 * Why in the payment service: @saga/messaging has no Prisma client of its own and service-kit no
 * schema to generate one from; payment has a generated client. Every statement here is raw SQL, so
 * its schema does not matter: the database holds messaging.sql, ordering.sql and an effect table.
 *
 * About 6-10 s (vitest's duration in three runs on a shared 2-core machine: 9.4, 9.1, 6.2 s, of
 * which the two tests 6.8, 6.8, 4.3 s).
 */
import { createRequire } from 'node:module'
import { randomUUID } from 'node:crypto'
import { PrismaPg } from '@prisma/adapter-pg'
import {
  createMessaging,
  enqueue,
  prismaDatabase,
  type HandlerDefinition,
  type MessageContract,
  type Messaging,
} from '@saga/messaging'
import { queueName, deadLetterQueueName, type MessagingConsumerOptions } from '@saga/messaging/parts'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  eventually,
  uniqueName,
  useFixture,
  type TestDatabase,
} from '@saga/testkit'
import pg from 'pg'
import { describe, expect, it, onTestFinished } from 'vitest'
import { z } from 'zod'
import { PrismaClient, type Prisma } from '../src/generated/prisma/client.js'

type Tx = Prisma.TransactionClient

const require = createRequire(import.meta.url)
const SQL_FILES = ['@saga/messaging/sql/messaging.sql', '@saga/messaging/sql/ordering.sql'].map((file) =>
  require.resolve(file),
)

/** A sequenced fact: `n` is its place among its key's (1, 2, ...). */
const EntryRecorded: MessageContract<{ n: number }> = {
  type: 'test.entry-recorded.v1',
  routingKey: 'test.entry-recorded',
  schema: z.object({ n: z.number().int() }),
  ordering: 'per-key',
}

/** How an ordered handler misbehaves on one message, after writing its effect row. */
type Fault = (tx: Tx, key: string, n: number) => Promise<string | undefined> | string | undefined

/** The database and broker names of this file's tests. */
interface PrismaOrderFixture {
  db: TestDatabase
  exchange: string
  prefix: string
  cleanup(): Promise<void>
}

const fixture = useFixture(async (): Promise<PrismaOrderFixture> => {
  const db = await createTestDatabase({ prefix: 'payment_prisma_order', sqlFiles: SQL_FILES })
  await db.pool.query(`CREATE TABLE effect (id bigserial PRIMARY KEY, handler text NOT NULL,
    message_id uuid NOT NULL, key text NOT NULL, n integer NOT NULL, sequence bigint NOT NULL)`)
  const exchange = uniqueName('prisma_order_ex')
  const prefix = uniqueName('prisma_order')
  return {
    db,
    exchange,
    prefix,
    async cleanup() {
      const handlers = ['apply-entry', 'apply-entry-poisoned'].map((h) => queueName(prefix, h))
      await deleteBrokerObjects({
        queues: [...handlers, ...handlers.map(deadLetterQueueName)],
        exchanges: [exchange],
      })
      await db.drop()
    },
  }
})

/**
 * Starts messaging as a service of its own would (a pool, a PrismaClient over it, `prismaDatabase`),
 * stopped when the test ends: the next test's producer publishes the same routing key.
 */
async function start(
  service: string,
  options: { handlers?: HandlerDefinition<Tx>[]; consumer?: MessagingConsumerOptions },
): Promise<Messaging<Tx>> {
  const pool = new pg.Pool({ connectionString: fixture.db.url, max: 6 })
  pool.on('error', () => undefined)
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) })
  const consumer = (options.handlers ?? []).length > 0
  const messaging = createMessaging<Tx>({
    service,
    queuePrefix: fixture.prefix,
    pool,
    database: prismaDatabase(prisma),
    amqpUrl: AMQP_URL,
    exchange: fixture.exchange,
    handlers: options.handlers ?? [],
    // Consumers publish nothing: the producer's relay is the only one.
    relay: { enabled: !consumer },
    consumer: options.consumer ?? {},
  })
  onTestFinished(async () => {
    await messaging.stop()
    await prisma.$disconnect()
    await pool.end().catch(() => undefined)
  })
  await messaging.start()
  return messaging
}

/** An ordered handler writing one effect row per run through the Prisma transaction, then `fault`. */
function orderedHandler(name: string, fault: Fault): HandlerDefinition<Tx, { n: number }> {
  return {
    name,
    message: EntryRecorded,
    ordering: 'per-key',
    async handle(message, tx) {
      const { key, sequence } = message.ordering as { key: string; sequence: number }
      await tx.$executeRawUnsafe(
        'INSERT INTO effect (handler, message_id, key, n, sequence) VALUES ($1, $2::uuid, $3, $4::int, $5::bigint)',
        name,
        message.id,
        key,
        message.payload.n,
        sequence,
      )
      const failure = await fault(tx, key, message.payload.n)
      if (failure !== undefined) throw new Error(failure)
    },
  }
}

/** Enqueues `perKey` messages per key through Prisma, one transaction each, a key's in order, 8 keys at a time. */
async function produce(producer: Messaging<Tx>, keys: readonly string[], perKey: number): Promise<void> {
  let next = 0
  const writer = async (): Promise<void> => {
    for (let index = next++; index < keys.length; index = next++) {
      const key = keys[index] as string
      for (let n = 1; n <= perKey; n += 1)
        await producer.transaction((tx) =>
          enqueue(tx, {
            type: EntryRecorded.type,
            routingKey: EntryRecorded.routingKey,
            payload: { n },
            aggregateId: key,
            correlationId: key,
            orderingKey: key,
          }),
        )
    }
  }
  await Promise.all(Array.from({ length: 8 }, writer))
}

/** `handler`'s committed effects by key, in commit order (`effect.id`): each run's `n` and sequence. */
async function effectsByKey(handler: string): Promise<Map<string, Array<{ n: number; sequence: number }>>> {
  const { rows } = await fixture.db.pool.query<{ key: string; n: number; sequence: string }>(
    'SELECT key, n, sequence::text FROM effect WHERE handler = $1 ORDER BY id',
    [handler],
  )
  const byKey = new Map<string, Array<{ n: number; sequence: number }>>()
  for (const row of rows)
    byKey.set(row.key, [...(byKey.get(row.key) ?? []), { n: row.n, sequence: Number(row.sequence) }])
  return byKey
}

/** `handler`'s cursors: key -> last sequence, whether it may hold, and what blocks it. */
async function cursors(
  handler: string,
): Promise<
  Map<string, { last: number; held: boolean; blockedBy: string | null; blockedSeq: number | null }>
> {
  const { rows } = await fixture.db.pool.query<{
    key: string
    last_seq: string
    held: boolean
    blocked_by: string | null
    blocked_seq: string | null
  }>(
    'SELECT key, last_seq::text, held, blocked_by::text, blocked_seq::text FROM ordering_cursor WHERE handler = $1',
    [handler],
  )
  return new Map(
    rows.map((r) => [
      r.key,
      {
        last: Number(r.last_seq),
        held: r.held,
        blockedBy: r.blocked_by,
        blockedSeq: r.blocked_seq === null ? null : Number(r.blocked_seq),
      },
    ]),
  )
}

const count = async (sql: string, params: unknown[]): Promise<number> =>
  (await fixture.db.pool.query<{ n: number }>(sql, params)).rows[0]?.n ?? 0

/** Consumer settings of both tests: quick retries, a sweep that runs within the test's time. */
const CONSUMER: MessagingConsumerOptions = {
  concurrency: 3,
  retryBaseMs: 40,
  retryMaxMs: 200,
  ordering: { sweepMs: 300, gapAfterMs: 60_000, putBackAgainMs: 3_000 },
}

const KEYS = 50
const PER_KEY = 10
/**
 * Keys whose message 2 fails until messages 3 and 4 are held, and whose message 3 fails once, when
 * it is released from the hold: holds, put backs and releases happen whatever the timing.
 */
const HELD_KEYS = 5

describe('per-key order over prismaDatabase', () => {
  it(`when ${KEYS} keys x ${PER_KEY} messages go to two ordered Prisma consumers with random transient failures, then each key's messages are handled once each, in commit order, and nothing is left held`, async () => {
    const handler = 'apply-entry'
    const keys = Array.from({ length: KEYS }, () => randomUUID())
    const gated = new Set<string>(keys.slice(0, HELD_KEYS))
    const releasedOnce = new Set<string>()
    const fault: Fault = async (tx, key, n) => {
      if (gated.has(key) && n === 2) {
        const held = await tx.$queryRawUnsafe<unknown[]>(
          'SELECT 1 FROM ordering_waiting WHERE handler = $1 AND key = $2 AND seq IN (3, 4)',
          handler,
          key,
        )
        if (held.length < 2) return 'waiting for messages 3 and 4 to be held'
      }
      // Message 3 of a gated key runs first from the hold: failing there puts it back into the
      // queue; once its copy is handled, 4 is released from the hold.
      if (gated.has(key) && n === 3 && !releasedOnce.has(key)) {
        releasedOnce.add(key)
        return 'failing once when released from the hold'
      }
      return Math.random() < 0.05 ? 'random transient failure' : undefined
    }
    // Enough attempts for a gated message 2 to wait for its successors (about a minute at 200 ms).
    const consumer = { ...CONSUMER, maxAttempts: 300 }
    const a = await start('ledger', { handlers: [orderedHandler(handler, fault)], consumer })
    const b = await start('ledger', { handlers: [orderedHandler(handler, fault)], consumer })
    const producer = await start('producer', {})

    await produce(producer, keys, PER_KEY)
    const total = KEYS * PER_KEY
    await eventually(
      'every message handled',
      async () =>
        (await count('SELECT count(*)::int AS n FROM inbox_message WHERE handler = $1', [handler])) === total,
      120_000,
    )

    // A run that threw was rolled back: every effect row is a committed run, one per message.
    expect(await count('SELECT count(*)::int AS n FROM effect WHERE handler = $1', [handler])).toBe(total)
    const byKey = await effectsByKey(handler)
    const inOrder = Array.from({ length: PER_KEY }, (_, i) => ({ n: i + 1, sequence: i + 1 }))
    for (const key of keys) expect(byKey.get(key)).toEqual(inOrder)
    const all = await cursors(handler)
    expect(all.size).toBe(KEYS)
    for (const key of keys)
      expect(all.get(key)).toEqual({ last: PER_KEY, held: false, blockedBy: null, blockedSeq: null })
    expect(await count('SELECT count(*)::int AS n FROM ordering_waiting', [])).toBe(0)
    // The paths under test were taken: early deliveries held, put back into the queue when they
    // failed from the hold, and released from the table (each gated key's 4, at least).
    const sum = (name: 'orderWaitedTotal' | 'orderReleasedTotal' | 'orderPutBackTotal'): number =>
      a.stats().consumer[name] + b.stats().consumer[name]
    expect(sum('orderWaitedTotal')).toBeGreaterThanOrEqual(HELD_KEYS)
    expect(sum('orderPutBackTotal')).toBeGreaterThanOrEqual(HELD_KEYS)
    expect(sum('orderReleasedTotal')).toBeGreaterThanOrEqual(HELD_KEYS)
  }, 180_000)

  it("when one key's message 3 always throws, then it is dead-lettered and blocks its key's cursor, the key's later messages are held, and every other key completes in order", async () => {
    const handler = 'apply-entry-poisoned'
    const keys = Array.from({ length: 10 }, () => randomUUID())
    const poisoned = keys[0] as string
    const fault: Fault = (_tx, key, n) => (key === poisoned && n === 3 ? 'poisoned message' : undefined)
    const consumer = { ...CONSUMER, maxAttempts: 3 }
    const deadLettered: string[] = []
    for (let i = 0; i < 2; i += 1) {
      const instance = await start('ledger', { handlers: [orderedHandler(handler, fault)], consumer })
      instance.signals.on('deadLettered', ({ id }) => deadLettered.push(String(id)))
    }
    const producer = await start('producer', {})

    await produce(producer, keys, 5)
    const { rows } = await fixture.db.pool.query<{ id: string }>(
      `SELECT id::text FROM outbox_message WHERE headers->>'orderingKey' = $1 AND (headers->>'sequence')::int = 3`,
      [poisoned],
    )
    const blocker = rows[0]?.id
    expect(blocker).toBeDefined()
    await eventually(
      'the poisoned key blocked',
      async () => (await cursors(handler)).get(poisoned)?.blockedBy === blocker,
    )
    await eventually(
      'the other keys handled',
      async () =>
        (await count('SELECT count(*)::int AS n FROM effect WHERE handler = $1', [handler])) === 9 * 5 + 2,
    )
    await eventually(
      "the poisoned key's later two held",
      async () =>
        (await count('SELECT count(*)::int AS n FROM ordering_waiting WHERE key = $1', [poisoned])) === 2,
    )

    const byKey = await effectsByKey(handler)
    for (const key of keys.slice(1))
      expect(byKey.get(key)).toEqual([1, 2, 3, 4, 5].map((n) => ({ n, sequence: n })))
    expect(byKey.get(poisoned)).toEqual([1, 2].map((n) => ({ n, sequence: n })))
    const all = await cursors(handler)
    expect(all.get(poisoned)).toEqual({ last: 2, held: true, blockedBy: blocker, blockedSeq: 3 })
    for (const key of keys.slice(1)) expect(all.get(key)).toMatchObject({ last: 5, blockedBy: null })
    await eventually('the poisoned message dead-lettered', () => deadLettered.length > 0)
    expect(deadLettered).toEqual([blocker])
  }, 120_000)
})
