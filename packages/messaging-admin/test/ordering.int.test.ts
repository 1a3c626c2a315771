import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import type pg from 'pg'
import type { HandlerDefinition } from '@saga/messaging'
import { deadLetterQueueName } from '@saga/messaging/parts'
import Fastify from 'fastify'
import { createMessagingAdmin, type MessagingAdmin } from '../src/index.js'
import { messagingAdminPlugin } from '../src/fastify/index.js'
import {
  createAdminFixture,
  envelope,
  eventually,
  happened,
  type AdminFixture,
  type Happened,
} from './admin-fixture.js'

/** Per-key order's tables, as a service resolves them. */
const ORDERING_SQL = createRequire(import.meta.url).resolve('@saga/messaging/sql/ordering.sql')
const HANDLER = 'ordered'
const TOKEN = 'admin-token-for-tests-0123456789'
const KEYS = 20
const PER_KEY = 5

/** An ordered handler writing one effect row per run; throws for the `key:n` pairs in `poisoned`. */
function orderedHandler(poisoned: Set<string>): HandlerDefinition<pg.PoolClient, Happened> {
  return {
    name: HANDLER,
    message: happened,
    ordering: 'per-key',
    async handle(message, tx) {
      await tx.query('INSERT INTO effect (message_id, handler, n) VALUES ($1, $2, $3)', [
        message.id,
        HANDLER,
        message.payload.n,
      ])
      if (poisoned.has(`${message.ordering?.key}:${message.payload.n}`)) throw new Error('poisoned')
    },
  }
}

/** Publishes `PER_KEY` sequenced messages for each of `keys`, a key's in order; returns id -> key. */
async function publishKeys(fixture: AdminFixture, keys: readonly string[]): Promise<Map<string, string>> {
  const keyOf = new Map<string, string>()
  for (let n = 1; n <= PER_KEY; n += 1)
    for (const key of keys) {
      const body = envelope({ partitionkey: key, sequence: String(n).padStart(20, '0'), data: { n } })
      keyOf.set(body.id as string, key)
      await fixture.publish(body)
    }
  return keyOf
}

/** Each key's handled `n`s in the order their transactions wrote them. */
async function handledByKey(
  fixture: AdminFixture,
  keyOf: Map<string, string>,
): Promise<Map<string, number[]>> {
  const byKey = new Map<string, number[]>()
  for (const row of await fixture.effects(HANDLER)) {
    const key = keyOf.get(row.message_id) as string
    byKey.set(key, [...(byKey.get(key) ?? []), row.n])
  }
  return byKey
}

/** Starts the fixture and its admin; runs `body`; cleans up. */
async function withOrderedService(
  poisoned: Set<string>,
  body: (fixture: AdminFixture, admin: MessagingAdmin) => Promise<void>,
  gapAfterMs = 60_000,
): Promise<void> {
  const consumer = { maxAttempts: 2, ordering: { sweepMs: 100, gapAfterMs } }
  const fixture = await createAdminFixture('ordering', [orderedHandler(poisoned)], consumer)
  await fixture.db.pool.query(await readFile(ORDERING_SQL, 'utf8'))
  const admin = createMessagingAdmin(fixture.options)
  try {
    await body(fixture, admin)
  } finally {
    await admin.close()
    await fixture.cleanup()
  }
}

describe('a poisoned ordered key', () => {
  it('when one message of a key always fails, then that key is blocked behind it while the others complete, and after a skip it resumes in order', async () => {
    const keys = Array.from({ length: KEYS }, () => randomUUID())
    const poisonedKey = keys[7] as string
    await withOrderedService(new Set([`${poisonedKey}:2`]), async (fixture, admin) => {
      const keyOf = await publishKeys(fixture, keys)
      await eventually(
        'the key blocked, its later messages held behind it',
        async () => (await admin.stuckKeys({ limit: 10 }))[0]?.waiting === 3,
      )
      const [blocked] = await admin.stuckKeys({ limit: 10 })
      await eventually(
        'every other key handled',
        async () => (await fixture.effects(HANDLER)).length >= (KEYS - 1) * PER_KEY + 1,
      )
      const handled = await handledByKey(fixture, keyOf)
      for (const key of keys.filter((k) => k !== poisonedKey))
        expect(handled.get(key)).toEqual([1, 2, 3, 4, 5])
      // The poisoned run's effects rolled back: only 1 handled, 3..5 held behind 2.
      expect(handled.get(poisonedKey)).toEqual([1])
      expect(blocked).toMatchObject({
        handler: HANDLER,
        producer: 'test',
        key: poisonedKey,
        state: 'blocked',
        lastSeq: '1',
        blockedSeq: '2',
        waiting: 3,
      })
      expect(blocked?.blockedSince).toEqual(expect.any(String))

      const dry = await admin.skipOrdered(
        { handler: HANDLER, producer: 'test', key: poisonedKey },
        { actor: 'alice@ops', dryRun: true },
      )
      expect(dry).toEqual({
        dryRun: true,
        actionId: null,
        results: [{ outcome: 'would-skip', from: '1', to: '2', skipped: blocked?.blockedBy }],
      })
      expect(await admin.stuckKeys({ limit: 10 })).toHaveLength(1)
      expect(await admin.actions(10)).toHaveLength(0)

      const done = await admin.skipOrdered(
        { handler: HANDLER, producer: 'test', key: poisonedKey },
        { actor: 'alice@ops', dryRun: false },
      )
      expect(done.results[0]).toMatchObject({ outcome: 'skipped', from: '1', to: '2' })
      const [action] = await admin.actions(10)
      expect(action).toMatchObject({
        id: done.actionId,
        actor: 'alice@ops',
        action: 'ordering.skip',
        ids: [blocked?.blockedBy],
      })
      await eventually(
        'the key resumed',
        async () => (await handledByKey(fixture, keyOf)).get(poisonedKey)?.length === 4,
      )
      expect((await handledByKey(fixture, keyOf)).get(poisonedKey)).toEqual([1, 3, 4, 5])
      expect(await admin.stuckKeys({ limit: 10 })).toEqual([])
    })
  })

  it('when the blocking message is requeued after a fix, then it is handled in order and the key resumes behind it', async () => {
    const keys = Array.from({ length: 5 }, () => randomUUID())
    const poisonedKey = keys[2] as string
    const poisoned = new Set([`${poisonedKey}:3`])
    await withOrderedService(poisoned, async (fixture, admin) => {
      const keyOf = await publishKeys(fixture, keys)
      await eventually(
        'the key blocked, its later messages held behind it',
        async () => (await admin.stuckKeys({ limit: 10 }))[0]?.waiting === 2,
      )
      const [blocked] = await admin.stuckKeys({ limit: 10 })
      expect(blocked).toMatchObject({ key: poisonedKey, lastSeq: '2', blockedSeq: '3', waiting: 2 })
      poisoned.clear()
      const dlq = deadLetterQueueName(fixture.queue(HANDLER))
      const requeued = await admin.requeue(dlq, [blocked?.blockedBy as string], {
        actor: 'bob@ops',
        dryRun: false,
      })
      expect(requeued.results).toEqual([{ messageId: blocked?.blockedBy, outcome: 'requeued' }])
      await eventually(
        'the key resumed',
        async () => (await handledByKey(fixture, keyOf)).get(poisonedKey)?.length === 5,
      )
      expect((await handledByKey(fixture, keyOf)).get(poisonedKey)).toEqual([1, 2, 3, 4, 5])
      expect(await admin.stuckKeys({ limit: 10 })).toEqual([])
    })
  })

  it("when a key's predecessor never comes, then the held messages are reported as a gap (admin, metric) and a skip over it handles them in order", async () => {
    const key = randomUUID()
    await withOrderedService(
      new Set(),
      async (fixture, admin) => {
        const keyOf = new Map<string, string>()
        for (const n of [1, 3, 4]) {
          const body = envelope({ partitionkey: key, sequence: String(n).padStart(20, '0'), data: { n } })
          keyOf.set(body.id as string, key)
          await fixture.publish(body)
        }
        await eventually(
          'the gap reported',
          async () => (await admin.stuckKeys({ limit: 10 }))[0]?.waiting === 2,
        )
        const [gap] = await admin.stuckKeys({ limit: 10 })
        expect(gap).toMatchObject({
          key,
          state: 'gap',
          lastSeq: '1',
          firstWaiting: '3',
          waiting: 2,
          blockedBy: null,
        })
        const gauge = fixture.messaging.metrics.find((m) => m.name === 'messaging_consumer_order_gaps')
        await eventually(
          'the gap counted',
          () => gauge?.kind !== 'histogram' && gauge?.read()[0]?.value === 1,
        )
        // The same through the routes: listed, and a dry-run skip that changes nothing.
        const app = Fastify()
        await app.register(messagingAdminPlugin, { admin, token: TOKEN })
        const listed = await app.inject({ method: 'GET', url: '/admin/messaging/ordered-keys?limit=5' })
        expect(listed.statusCode).toBe(200)
        expect(listed.json()).toMatchObject({ service: 'test', keys: [{ key, state: 'gap', waiting: 2 }] })
        const dry = await app.inject({
          method: 'POST',
          url: '/admin/messaging/ordered-keys/skip',
          headers: { authorization: `Bearer ${TOKEN}`, 'x-admin-actor': 'carol@ops' },
          payload: { handler: HANDLER, producer: 'test', key, dryRun: true },
        })
        expect(dry.json()).toEqual({
          dryRun: true,
          actionId: null,
          results: [{ outcome: 'would-skip', from: '1', to: '2', skipped: null }],
        })
        await app.close()
        const skipped = await admin.skipOrdered(
          { handler: HANDLER, producer: 'test', key },
          { actor: 'carol@ops', dryRun: false },
        )
        expect(skipped.results).toEqual([{ outcome: 'skipped', from: '1', to: '2', skipped: null }])
        await eventually(
          'the key resumed',
          async () => (await handledByKey(fixture, keyOf)).get(key)?.length === 3,
        )
        expect((await handledByKey(fixture, keyOf)).get(key)).toEqual([1, 3, 4])
      },
      200,
    )
  })
})
