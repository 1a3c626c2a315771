import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { deliverToHandler } from '../src/inbox/deliver-to-handler.js'
import type { ConsumedMessage } from '../src/types.js'
import { MESSAGING_SQL, happened, recordingHandler, type Happened } from './inbox-fixture.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'deliver', sqlFiles: [MESSAGING_SQL] })
  await db.pool.query(
    'CREATE TABLE effect (message_id uuid NOT NULL, handler text NOT NULL, n int NOT NULL, attempt int NOT NULL)',
  )
})
afterAll(async () => {
  await db?.drop()
})

const message = (n: number): ConsumedMessage<Happened> => {
  const correlationId = randomUUID()
  return {
    id: randomUUID(),
    type: happened.type,
    source: 'test',
    time: new Date(),
    subject: correlationId,
    correlationId,
    routingKey: happened.routingKey,
    payload: { n },
    attempt: 1,
  }
}

const effects = async (handler: string) =>
  (await db.pool.query<{ n: number }>('SELECT n FROM effect WHERE handler = $1', [handler])).rows
const inboxRows = async (messageId: string) =>
  (
    await db.pool.query<{ handler: string }>('SELECT handler FROM inbox_message WHERE message_id = $1', [
      messageId,
    ])
  ).rows

describe('deliverToHandler', () => {
  it('when a message is delivered twice to one handler, then it is handled once and the second is a duplicate', async () => {
    const handler = recordingHandler('once')
    const sent = message(7)

    expect(await deliverToHandler(pgDatabase(db.pool), handler, sent)).toBe('handled')
    expect(await deliverToHandler(pgDatabase(db.pool), handler, sent)).toBe('duplicate')

    expect(await effects('once')).toEqual([{ n: 7 }])
    expect(await inboxRows(sent.id)).toEqual([{ handler: 'once' }])
  })

  it('when the same message goes to two handlers, then each handles it', async () => {
    const sent = message(3)

    expect(await deliverToHandler(pgDatabase(db.pool), recordingHandler('first'), sent)).toBe('handled')
    expect(await deliverToHandler(pgDatabase(db.pool), recordingHandler('second'), sent)).toBe('handled')

    expect(await inboxRows(sent.id)).toHaveLength(2)
  })

  it('when the handler throws, then the error is rethrown, its writes and the inbox row roll back, and a redelivery is handled', async () => {
    const sent = message(5)
    const failing = recordingHandler('flaky', () => {
      throw new Error('boom')
    })

    await expect(deliverToHandler(pgDatabase(db.pool), failing, sent)).rejects.toThrow('boom')
    expect(await effects('flaky')).toEqual([])
    expect(await inboxRows(sent.id)).toEqual([])

    expect(await deliverToHandler(pgDatabase(db.pool), recordingHandler('flaky'), sent)).toBe('handled')
    expect(await effects('flaky')).toEqual([{ n: 5 }])
  })
})
