import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'
import type { OutgoingMessage } from '../src/types.js'
import { MESSAGING_SQL } from './inbox-fixture.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'pg_database', sqlFiles: [MESSAGING_SQL] })
  await db.pool.query('CREATE TABLE effect (n int NOT NULL)')
})
beforeEach(async () => {
  await db.pool.query('TRUNCATE effect, inbox_message, outbox_message')
})
afterAll(async () => {
  await db?.drop()
})

/**
 * Resolves once `client` has emitted 'end' (pg emits it after the 'error' of a connection lost while
 * idle), or rejects after `ms`. Listens for 'end' only: an 'error' listener here would hide the bug.
 */
const ended = (client: NodeJS.EventEmitter, ms: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'end' within ${ms} ms`)), ms)
    client.once('end', () => {
      clearTimeout(timer)
      resolve()
    })
  })

describe('pgDatabase', () => {
  it('when the connection dies between two statements of a transaction, then the transaction fails and rolls back, nothing is thrown uncaught, and the pool serves the next one', async () => {
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown): void => {
      uncaught.push(error)
    }
    process.on('uncaughtException', onUncaught)
    try {
      const database = pgDatabase(db.pool)
      const attempt = database.transaction(async (client) => {
        await client.query('INSERT INTO effect (n) VALUES (1)')
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
        const died = ended(client, 10_000)
        // Killed while no statement of this client is running: pg reports it as a client 'error' event.
        await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid])
        await died
        await client.query('INSERT INTO effect (n) VALUES (2)')
      })
      await expect(attempt).rejects.toThrow()
      expect(uncaught).toEqual([])
      expect((await db.pool.query('SELECT n FROM effect')).rows).toEqual([])
      await database.transaction((client) => client.query('INSERT INTO effect (n) VALUES (3)'))
      expect((await db.pool.query('SELECT n FROM effect')).rows).toEqual([{ n: 3 }])
    } finally {
      process.off('uncaughtException', onUncaught)
    }
  })
})

const event = (n: number, payload: unknown = { n }): OutgoingMessage => ({
  type: 'test.happened.v1',
  routingKey: 'test.happened',
  payload,
  aggregateId: `agg-${n}`,
  correlationId: `corr-${n}`,
})

/** What the database holds: effects, inbox pairs and outbox rows (type and payload). */
const stored = async (): Promise<{ effects: number[]; inbox: string[]; outbox: unknown[] }> => ({
  effects: (await db.pool.query<{ n: number }>('SELECT n FROM effect ORDER BY n')).rows.map((r) => r.n),
  inbox: (
    await db.pool.query<{ h: string }>('SELECT message_id || handler AS h FROM inbox_message')
  ).rows.map((r) => r.h),
  outbox: (await db.pool.query('SELECT type, payload, aggregate_id FROM outbox_message ORDER BY id')).rows,
})

/** Counts the messages (round trips) pool clients send, by wrapping `query` on each checkout. */
function countRoundTrips(pool: pg.Pool): { sent: string[]; stop: () => void } {
  const sent: string[] = []
  const wrapped = new WeakSet<object>()
  const onAcquire = (client: pg.PoolClient): void => {
    if (wrapped.has(client)) return
    wrapped.add(client)
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      if (active) sent.push(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text)
      return query(...args)
    }
  }
  let active = true
  pool.on('acquire', onAcquire)
  return {
    sent,
    stop: () => {
      active = false
      pool.off('acquire', onAcquire)
    },
  }
}

describe('pgDatabase inbox transactions', () => {
  it('when a handler writes an effect and enqueues an event, then inbox row, effect and outbox row commit in three round trips', async () => {
    const database = pgDatabase(db.pool)
    const messageId = randomUUID()
    const counter = countRoundTrips(db.pool)
    let outcome
    try {
      outcome = await database.inboxTransaction!({ messageId, handler: "it's-a-handler" }, async (tx) => {
        await tx.query('INSERT INTO effect (n) VALUES (1)')
        await enqueue(tx, event(1, { n: 1, quote: 'it\'s \\ "quoted"' }))
        return 'done'
      })
    } finally {
      counter.stop()
    }
    expect(outcome).toEqual({ fresh: true, value: 'done' })
    // BEGIN with the inbox INSERT; the handler's statement; the outbox INSERT with COMMIT.
    expect(counter.sent).toHaveLength(3)
    expect(counter.sent[2]).toMatch(/INSERT INTO outbox_message[\s\S]*;\nCOMMIT$/)
    expect(await stored()).toEqual({
      effects: [1],
      inbox: [`${messageId}it's-a-handler`],
      outbox: [
        { type: 'test.happened.v1', payload: { n: 1, quote: 'it\'s \\ "quoted"' }, aggregate_id: 'agg-1' },
      ],
    })
  })

  it('when the pair is already recorded, then the handler does not run and nothing more is written', async () => {
    const database = pgDatabase(db.pool)
    const entry = { messageId: randomUUID(), handler: 'h' }
    const run = (n: number) =>
      database.inboxTransaction!(entry, async (tx) => {
        await tx.query('INSERT INTO effect (n) VALUES ($1)', [n])
        await enqueue(tx, event(n))
      })
    expect(await run(1)).toEqual({ fresh: true, value: undefined })
    expect(await run(2)).toEqual({ fresh: false })
    const after = await stored()
    expect(after.effects).toEqual([1])
    expect(after.outbox).toHaveLength(1)
  })

  it('when the outbox INSERT sent with COMMIT fails, then the inbox row, the effect and every outbox row roll back, the error is thrown, and a redelivery runs the handler again', async () => {
    const database = pgDatabase(db.pool)
    const entry = { messageId: randomUUID(), handler: 'h' }
    // jsonb refuses \u0000, which JSON.stringify writes for a NUL character: the INSERT fails at COMMIT.
    const failing = database.inboxTransaction!(entry, async (tx) => {
      await tx.query('INSERT INTO effect (n) VALUES (1)')
      await enqueue(tx, event(1))
      await enqueue(tx, event(2, { n: 2, text: 'nul \u0000' }))
    })
    await expect(failing).rejects.toThrow(/unsupported Unicode escape sequence|\\u0000/)
    expect(await stored()).toEqual({ effects: [], inbox: [], outbox: [] })
    const retried = await database.inboxTransaction!(entry, async (tx) => {
      await tx.query('INSERT INTO effect (n) VALUES (3)')
      await enqueue(tx, event(3))
    })
    expect(retried.fresh).toBe(true)
    const after = await stored()
    expect(after.effects).toEqual([3])
    expect(after.inbox).toHaveLength(1)
    expect(after.outbox).toHaveLength(1)
  })

  it('when enqueue runs in a pg client the caller began itself, then the row is inserted at once', async () => {
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      await enqueue(client, event(7))
      const { rowCount } = await client.query('SELECT 1 FROM outbox_message')
      await client.query('ROLLBACK')
      expect(rowCount).toBe(1)
    } finally {
      client.release()
    }
  })
})
