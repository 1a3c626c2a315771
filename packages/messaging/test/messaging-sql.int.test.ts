import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { MESSAGING_SQL } from './inbox-fixture.js'

let db: TestDatabase

/** The tables and indexes of the public schema, sorted: what applying the SQL made. */
async function schema(): Promise<string[]> {
  const { rows } = await db.pool.query<{ name: string }>(
    `SELECT kind || ' ' || name AS name FROM (
       SELECT 'table' AS kind, tablename AS name FROM pg_tables WHERE schemaname = 'public'
       UNION ALL
       SELECT 'index', indexname FROM pg_indexes WHERE schemaname = 'public'
     ) AS objects ORDER BY 1`,
  )
  return rows.map((row) => row.name)
}

beforeAll(async () => {
  // Applied twice on a fresh database: the second run must find everything there and change nothing.
  db = await createTestDatabase({ prefix: 'messaging_sql', sqlFiles: [MESSAGING_SQL, MESSAGING_SQL] })
})
afterAll(async () => {
  await db?.drop()
})

describe('sql/messaging.sql', () => {
  it('when it is applied twice to a fresh database, then both runs succeed and the outbox and inbox exist once', async () => {
    const objects = await schema()
    expect(objects).toEqual(expect.arrayContaining(['table inbox_message', 'table outbox_message']))
    expect(objects).toContain('index outbox_message_pending_idx')
    expect(objects).toContain('index inbox_message_received_at_idx')
    expect(new Set(objects).size).toBe(objects.length)
  })

  it('when it is applied again to a database with rows, then the rows and the schema stay as they were', async () => {
    const before = await schema()
    await db.pool.query(
      `INSERT INTO inbox_message (message_id, handler) VALUES ('00000000-0000-4000-8000-000000000001', 'kept')`,
    )

    await db.pool.query(await readFile(MESSAGING_SQL, 'utf8'))

    expect(await schema()).toEqual(before)
    const { rows } = await db.pool.query<{ handler: string }>('SELECT handler FROM inbox_message')
    expect(rows).toEqual([{ handler: 'kept' }])
  })
})
