import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'pg_database' })
  await db.pool.query('CREATE TABLE effect (n int NOT NULL)')
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
