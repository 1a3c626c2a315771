import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { pgDatabase, type CommittedRow, type CommittedRowSink } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { literal, SqlResultError, SqlValueError } from '../src/sql.js'
import { MESSAGING_SQL } from './inbox-fixture.js'

/**
 * Values that break naive quoting: quotes, backslashes (which mean something else in a plain
 * constant with standard_conforming_strings off), dollar quotes, Unicode, and long ones.
 */
const HOSTILE = [
  "it's",
  "'; DROP TABLE outbox_message; --",
  '\\',
  'ends with a backslash\\',
  "\\'",
  "\\''\\",
  '\\x41\\101\\u0041\\n',
  '$$ dollar $$',
  '$tag$ body $tag$',
  '"double" "quotes"',
  '日本語 🎉 \u202e reversed \u2028 line separator é',
  "'\\".repeat(50_000),
  'x'.repeat(200_000),
]

/** A value cut to fit a b-tree index entry (aggregate_id and the inbox key are indexed; an entry holds about 2.7 kB). */
const indexable = (value: string): string => value.slice(0, 1_000)

let db: TestDatabase
/** A pool whose sessions read string constants with standard_conforming_strings off. */
let legacy: pg.Pool
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'sql_inline', sqlFiles: [MESSAGING_SQL] })
  legacy = new pg.Pool({ connectionString: db.url, options: '-c standard_conforming_strings=off', max: 2 })
})
beforeEach(async () => {
  await db.pool.query('TRUNCATE inbox_message, outbox_message')
})
afterAll(async () => {
  await legacy?.end()
  await db?.drop()
})

/** A sink that takes rows now (the held INSERT) and keeps what it was handed. */
function heldSink(): CommittedRowSink & { rows: CommittedRow[] } {
  const rows: CommittedRow[] = []
  return { rows, holdMs: () => 60_000, publish: (handed) => void rows.push(...handed), wake: () => undefined }
}

const pools = (): [string, pg.Pool][] => [
  ['standard_conforming_strings on', db.pool],
  ['standard_conforming_strings off', legacy],
]

describe('literal against PostgreSQL', () => {
  it('when each hostile value is selected as a literal, then the server reads back the same value, whatever standard_conforming_strings', async () => {
    for (const [setting, pool] of pools()) {
      for (const value of HOSTILE) {
        const { rows } = await pool.query<{ v: string }>(`SELECT ${literal(value)}::text AS v`)
        expect(rows[0]?.v, `${setting}: ${value.slice(0, 40)}`).toBe(value)
      }
    }
  })
})

describe('the outbox INSERTs sent with a pgDatabase COMMIT', () => {
  for (const mode of ['due', 'held'] as const) {
    it(`when every text of a message is hostile (${mode} rows), then each reads back equal, whatever standard_conforming_strings`, async () => {
      for (const [setting, pool] of pools()) {
        const sink = mode === 'held' ? heldSink() : undefined
        const database = pgDatabase(pool, { committed: sink })
        const enqueued = await database.transaction(async (tx) => {
          const ids: string[] = []
          for (const value of HOSTILE)
            ids.push(
              await enqueue(tx, {
                type: value,
                routingKey: value,
                payload: { text: value, [value.slice(0, 100)]: [value] },
                aggregateId: indexable(value),
                correlationId: value,
                causationId: value,
              }),
            )
          return ids
        })
        const { rows } = await db.pool.query<{
          id: string
          type: string
          routing_key: string
          aggregate_id: string
          payload: unknown
          correlation: string
          causation: string
          held: boolean
        }>(
          `SELECT id, type, routing_key, aggregate_id, payload, headers->>'correlationId' AS correlation,
                  headers->>'causationId' AS causation, available_at > now() + interval '30 seconds' AS held
           FROM outbox_message WHERE id = ANY($1::uuid[]) ORDER BY id`,
          [enqueued],
        )
        expect(rows.map((row) => row.id)).toEqual(enqueued)
        rows.forEach((row, i) => {
          const value = HOSTILE[i]!
          const what = `${setting}, value ${i}`
          expect(row.type, what).toBe(value)
          expect(row.routing_key, what).toBe(value)
          expect(row.aggregate_id, what).toBe(indexable(value))
          expect(row.correlation, what).toBe(value)
          expect(row.causation, what).toBe(value)
          expect(row.payload, what).toEqual({ text: value, [value.slice(0, 100)]: [value] })
          expect(row.held, what).toBe(mode === 'held')
        })
        if (sink) expect(sink.rows.map((row) => row.id)).toEqual(enqueued)
        await db.pool.query('TRUNCATE outbox_message')
      }
    })
  }

  it('when a value holds a NUL character, then enqueue refuses it and the transaction writes nothing', async () => {
    const database = pgDatabase(db.pool)
    const attempt = database.transaction(async (tx) => {
      await enqueue(tx, { type: 'fine.v1', routingKey: 'fine', payload: {}, correlationId: 'c' })
      await enqueue(tx, { type: 'bad\0.v1', routingKey: 'bad', payload: {}, correlationId: 'c' })
    })
    await expect(attempt).rejects.toThrow(SqlValueError)
    expect((await db.pool.query('SELECT count(*)::int AS n FROM outbox_message')).rows).toEqual([{ n: 0 }])
  })

  it('when a statement failed and fn caught its error, then the COMMIT answered ROLLBACK fails the transaction instead of passing for a commit', async () => {
    const database = pgDatabase(db.pool)
    const attempt = database.transaction(async (tx) => {
      await tx.query("INSERT INTO inbox_message (message_id, handler) VALUES ($1, 'h')", [randomUUID()])
      await tx.query('SELECT 1 / 0').catch(() => undefined)
    })
    await expect(attempt).rejects.toThrow(SqlResultError)
    expect((await db.pool.query('SELECT count(*)::int AS n FROM inbox_message')).rows).toEqual([{ n: 0 }])
    // The pool's client is clean for the next transaction.
    await database.transaction((tx) => tx.query('SELECT 1'))
  })
})

describe('the inbox INSERTs sent with BEGIN', () => {
  it('when handler names are hostile, then each pair is recorded as given and a repeat is a duplicate, whatever standard_conforming_strings', async () => {
    for (const [setting, pool] of pools()) {
      const database = pgDatabase(pool)
      const messageId = randomUUID()
      const handlers = HOSTILE.map(indexable)
      for (const handler of handlers) {
        const first = await database.inboxTransaction!({ messageId, handler }, () => Promise.resolve('ran'))
        const again = await database.inboxTransaction!({ messageId, handler }, () => Promise.resolve('ran'))
        expect([first, again], `${setting}: ${handler.slice(0, 40)}`).toEqual([
          { fresh: true, value: 'ran' },
          { fresh: false },
        ])
      }
      const batchId = randomUUID()
      const fresh = await database.inboxBatchTransaction!(
        handlers.map((handler) => ({ messageId: batchId, handler })),
        (_tx, ids) => Promise.resolve([...ids]),
      )
      expect(fresh).toEqual([batchId])
      const { rows } = await db.pool.query<{ handler: string }>(
        'SELECT handler FROM inbox_message WHERE message_id = ANY($1::uuid[])',
        [[messageId, batchId]],
      )
      expect(rows.map((row) => row.handler).sort(), setting).toEqual([...handlers, ...handlers].sort())
      await db.pool.query('TRUNCATE inbox_message')
    }
  })
})
