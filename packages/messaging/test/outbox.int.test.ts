import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NotInTransactionError, pgDatabase } from '../src/database.js'
import { enqueue, InvalidMessageError } from '../src/outbox/enqueue.js'
import type { Relay } from '../src/outbox/relay.js'
import type { TransactionClient } from '../src/types.js'
import { countIds, message, relayFixture, type RelayFixture } from './relay-fixture.js'

describe('outbox: enqueue and atomicity', () => {
  let f: RelayFixture
  let relay: Relay
  beforeAll(async () => {
    f = await relayFixture('outbox')
    relay = f.relay()
    await relay.start()
  })
  afterAll(() => f.cleanup())

  it('when the transaction rolls back, then no row is left and nothing is published', async () => {
    let id = ''
    await expect(
      pgDatabase(f.db.pool).transaction(async (tx) => {
        id = await enqueue(tx, message(1))
        throw new Error('business rule failed')
      }),
    ).rejects.toThrow('business rule failed')
    // A later committed message is published; the rolled-back one, sent before it, never shows up.
    const [later] = await f.commit([message(2)])
    await relay.signals.waitFor('published', (s) => s.id === later, 30_000)
    await f.tap.waitForCount(1, 30_000)
    expect(id).not.toBe('')
    expect((await f.db.pool.query('SELECT 1 FROM outbox_message WHERE id = $1', [id])).rowCount).toBe(0)
    expect(f.tap.ids()).toEqual([later])
  })

  it('when the transaction commits, then the row is published once with the CloudEvents envelope', async () => {
    const before = f.tap.messages.length
    const [id] = await f.commit([
      {
        ...message(3),
        causationId: 'cause-1',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    ])
    relay.wake()
    await relay.signals.waitFor('published', (s) => s.id === id, 30_000)
    const row = await f.row(id!)
    expect(row.published_at).toBeInstanceOf(Date)
    const [received] = (await f.tap.waitForCount(before + 1, 30_000)).slice(before)
    expect(countIds(f.tap.ids()).get(id!)).toBe(1)
    expect(received?.routingKey).toBe('test.happened')
    expect(received?.properties).toMatchObject({
      messageId: id,
      type: 'test.happened.v1',
      correlationId: 'corr-3',
      contentType: 'application/cloudevents+json; charset=utf-8',
      deliveryMode: 2,
      appId: 'test',
      headers: {
        'causation-id': 'cause-1',
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    })
    expect(received?.body).toMatchObject({
      specversion: '1.0',
      id,
      source: 'test',
      type: 'test.happened.v1',
      subject: 'agg-3',
      datacontenttype: 'application/json',
      correlationid: 'corr-3',
      causationid: 'cause-1',
      data: { n: 3 },
    })
  })

  it('when enqueue gets a pool or a client outside BEGIN, then it refuses and writes nothing', async () => {
    const before = (await f.rows()).length
    await expect(enqueue(f.db.pool, message(4))).rejects.toThrow(NotInTransactionError)
    const client = await f.db.pool.connect()
    try {
      await expect(enqueue(client, message(5))).rejects.toThrow(/outside BEGIN/)
    } finally {
      client.release()
    }
    expect((await f.rows()).length).toBe(before)
  })

  it('when a message is over maxMessageBytes, then enqueue refuses it by name and size and writes nothing; one at the limit is published with a body of that size', async () => {
    const big = {
      ...message(10),
      payload: { n: 10, filler: 'é'.repeat(1_000) },
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    }
    const database = pgDatabase(f.db.pool)
    const before = (await f.rows()).length
    let measured = 0
    await expect(
      database.transaction(async (tx) => {
        await enqueue(tx, message(11))
        return enqueue(tx, big, { maxMessageBytes: 2_000 })
      }),
    ).rejects.toThrow(InvalidMessageError)
    try {
      await database.transaction((tx) => enqueue(tx, big, { maxMessageBytes: 2_000 }))
    } catch (error) {
      expect((error as Error).message).toMatch(
        /^enqueue: test\.happened\.v1 is \d+ bytes as a message, over maxMessageBytes 2000/,
      )
      measured = Number(/is (\d+) bytes/.exec((error as Error).message)?.[1])
    }
    // Two-byte characters: the limit is in bytes, not in characters.
    expect(measured).toBeGreaterThan(2_000)
    expect((await f.rows()).length).toBe(before)

    // The body the relay publishes is the measured one plus the `source` attribute ('test').
    const [id] = await database.transaction(async (tx) => [
      await enqueue(tx, big, { maxMessageBytes: measured }),
    ])
    relay.wake()
    const received = await f.tap.waitFor((m) => m.messageId === id, 30_000, 'the message at the limit')
    expect(Buffer.byteLength(JSON.stringify(received.body))).toBe(measured + 'test'.length)
  })

  it('when a Prisma-style client is the root client, then enqueue refuses it', async () => {
    // The shape of a root PrismaClient as far as the guard looks (Prisma 7.10: `$connect` exists on
    // the root client only); a real client would need a generated schema this package does not own.
    const root = {
      $connect: () => Promise.resolve(),
      $executeRawUnsafe: () => Promise.resolve(1),
      $queryRawUnsafe: () => Promise.resolve([]),
    } as unknown as TransactionClient
    await expect(enqueue(root, message(6))).rejects.toThrow(/root PrismaClient/)
  })

  it('when ids are made, then they are UUIDv7 and increase with time', async () => {
    const ids = await f.commit([message(7), message(8), message(9)])
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect([...ids].sort()).toEqual(ids)
  })
})
