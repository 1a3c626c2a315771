import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { enqueue, pgDatabase } from '@saga/messaging'
import { deadLetterQueueName } from '@saga/messaging/parts'
import { createMessagingAdmin, type MessagingAdmin } from '../src/index.js'
import {
  collect,
  createAdminFixture,
  envelope,
  eventually,
  hostApp,
  recordingHandler,
  type AdminFixture,
} from './admin-fixture.js'

const TOKEN = 'admin-token-for-tests-0123456789'
const HANDLER = 'flaky'

let fx: AdminFixture
let admin: MessagingAdmin
let app: FastifyInstance
let readOnly: FastifyInstance
let failing = true
/** A session LISTENing on the relays' wake-up channel, and the payloads it heard. */
let listener: pg.Client
const wakes: string[] = []
const dlq = () => deadLetterQueueName(fx.queue(HANDLER))

const write = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `/admin/messaging${url}`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  })
const read = async <T>(url: string): Promise<T> => {
  const res = await app.inject({ method: 'GET', url: `/admin/messaging${url}` })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<T>()
}

/** Publishes a message the handler fails on while `failing`, and waits until it is dead-lettered. */
async function deadLetteredMessage(aggregateId = randomUUID()): Promise<string> {
  const dead = collect(fx.messaging.signals, 'deadLettered')
  const message = envelope({ subject: aggregateId, data: { n: 7 } })
  await fx.publish(message)
  await eventually('dead-lettered', () => dead.some((d) => d.id === message.id))
  return message.id as string
}

beforeAll(async () => {
  fx = await createAdminFixture(
    'admin',
    [
      recordingHandler(HANDLER, () => {
        if (failing) throw new Error('downstream is down')
      }),
    ],
    { maxAttempts: 1 },
  )
  listener = new pg.Client({ connectionString: fx.db.url })
  await listener.connect()
  listener.on('notification', (n) => wakes.push(n.payload ?? ''))
  await listener.query('LISTEN outbox')
  // The options object the service gave createMessaging.
  admin = createMessagingAdmin(fx.options)
  app = await hostApp(admin, TOKEN)
  readOnly = await hostApp(admin, undefined)
})

afterAll(async () => {
  await app?.close()
  await readOnly?.close()
  await admin?.close()
  await listener?.end()
  await fx?.cleanup()
})

describe('messaging admin summary', () => {
  it('when rows are pending and parked, then the summary counts them and the queues', async () => {
    const database = pgDatabase(fx.db.pool)
    const ids = await database.transaction(async (tx) => [
      await enqueue(tx, {
        type: 't.v1',
        routingKey: 't',
        payload: {},
        aggregateId: 'a1',
        correlationId: 'c',
      }),
      await enqueue(tx, {
        type: 't.v1',
        routingKey: 't',
        payload: {},
        aggregateId: 'a1',
        correlationId: 'c',
      }),
    ])
    await fx.db.pool.query(`UPDATE outbox_message SET failed_at = now(), last_error = 'gone' WHERE id = $1`, [
      ids[1],
    ])
    const summary = await read<{
      broker: string
      outbox: { pending: number; parked: number; oldestPendingAgeMs: number | null }
      queues: Array<{ queue: string; consumers: number | null; deadLettered: number | null }>
    }>('/summary')
    expect(summary.broker).toBe('connected')
    expect(summary.outbox).toMatchObject({ pending: 1, parked: 1 })
    expect(summary.outbox.oldestPendingAgeMs).toBeGreaterThanOrEqual(0)
    expect(summary.queues).toEqual([
      expect.objectContaining({
        queue: fx.queue(HANDLER),
        consumers: 1,
        deadLetterQueue: dlq(),
        deadLettered: 0,
      }),
    ])
    await fx.db.pool.query('DELETE FROM outbox_message')
  })
})

describe('ordered keys of a service without per-key order', () => {
  it("when the service has not applied per-key order's tables, then GET ordered-keys lists none (so a console may ask every service)", async () => {
    expect(await read('/ordered-keys')).toEqual({ service: admin.service, keys: [] })
  })
})

describe('messaging admin records', () => {
  it('when rows of an aggregate exist, then records lists them by occurred_at with their ids and trace id from the headers', async () => {
    const aggregateId = randomUUID()
    const database = pgDatabase(fx.db.pool)
    const first = await database.transaction((tx) =>
      enqueue(tx, {
        type: 'a.v1',
        routingKey: 'a',
        payload: { x: 1 },
        aggregateId,
        correlationId: aggregateId,
      }),
    )
    await database.transaction((tx) =>
      enqueue(tx, {
        type: 'b.v1',
        routingKey: 'b',
        payload: { x: 2 },
        aggregateId,
        correlationId: aggregateId,
        causationId: first,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      }),
    )
    const { outbox } = await read<{ outbox: Array<Record<string, unknown>> }>(
      `/records?aggregateId=${aggregateId}`,
    )
    expect(outbox.map((r) => r.type)).toEqual(['a.v1', 'b.v1'])
    expect(outbox[0]).toMatchObject({ traceId: null })
    expect(outbox[1]).toMatchObject({
      state: 'pending',
      correlationId: aggregateId,
      causationId: first,
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      payload: { x: 2 },
      headers: {
        correlationId: aggregateId,
        causationId: first,
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      },
    })
  })

  it('when a query is invalid, then 400 names the field', async () => {
    const res = await app.inject({ method: 'GET', url: '/admin/messaging/inbox?messageId=not-a-uuid' })
    expect(res.statusCode).toBe(400)
    expect(res.json<{ details: Array<{ path: string }> }>().details[0]?.path).toMatch(
      /^querystring\/messageId/,
    )
  })
})

describe('messaging admin records found by an id', () => {
  it('when a message id or a trace id is sought, then the row of that id, or the rows of that trace, name their aggregate', async () => {
    const aggregateId = randomUUID()
    const traceId = randomBytes(16).toString('hex')
    const traced = (n: number) =>
      pgDatabase(fx.db.pool).transaction((tx) =>
        enqueue(tx, {
          type: 'found.v1',
          routingKey: 'found',
          payload: { n },
          aggregateId,
          correlationId: aggregateId,
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        }),
      )
    const first = await traced(1)
    const second = await traced(2)
    const other = await pgDatabase(fx.db.pool).transaction((tx) =>
      enqueue(tx, {
        type: 'other.v1',
        routingKey: 'other',
        payload: {},
        aggregateId,
        correlationId: aggregateId,
        traceparent: `00-${randomBytes(16).toString('hex')}-00f067aa0ba902b7-01`,
      }),
    )

    const byId = await read<{ outbox: Array<Record<string, unknown>> }>(`/records/find?messageId=${second}`)
    expect(byId.outbox).toEqual([expect.objectContaining({ id: second, aggregateId, traceId })])
    const byTrace = await read<{ outbox: Array<Record<string, unknown>> }>(
      `/records/find?traceId=${traceId.toUpperCase()}`,
    )
    expect(byTrace.outbox.map((row) => row.id)).toEqual([first, second])
    expect(byTrace.outbox.map((row) => row.id)).not.toContain(other)
    const none = await read<{ outbox: unknown[] }>(`/records/find?messageId=${randomUUID()}`)
    expect(none.outbox).toEqual([])
    for (const bad of ['', `?messageId=${second}&traceId=${traceId}`, '?traceId=xyz', '?messageId=1']) {
      const res = await app.inject({ method: 'GET', url: `/admin/messaging/records/find${bad}` })
      expect(res.statusCode, bad).toBe(400)
    }
  })
})

describe('dead letters browsed and requeued', () => {
  it('when a dead letter is browsed, then it stays; when requeued, then it is consumed once and the action recorded', async () => {
    const aggregateId = randomUUID()
    const id = await deadLetteredMessage(aggregateId)
    const browse = () =>
      read<{ queues: Array<{ queue: string; count: number; messages: Array<Record<string, unknown>> }> }>(
        `/dead-letters?aggregateId=${aggregateId}`,
      )
    const first = await browse()
    expect(first.queues[0]).toMatchObject({ queue: dlq(), count: 1 })
    expect(first.queues[0]?.messages[0]).toMatchObject({
      messageId: id,
      aggregateId,
      handler: HANDLER,
      reason: expect.stringContaining('downstream is down') as string,
      payload: { n: 7 },
    })
    expect((await browse()).queues[0]?.messages).toHaveLength(1)

    const dry = await write('/dead-letters/requeue', { queue: dlq(), messageIds: [id], dryRun: true })
    expect(dry.json()).toEqual({
      dryRun: true,
      actionId: null,
      results: [{ messageId: id, outcome: 'would-requeue' }],
    })
    expect(await fx.ready(dlq())).toBe(1)

    failing = false
    const handled = collect(fx.messaging.signals, 'handled')
    const res = await write(
      '/dead-letters/requeue',
      { queue: dlq(), messageIds: [id, randomUUID()] },
      {
        'x-admin-actor': 'alice@ops',
      },
    )
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json<{ actionId: string; results: Array<{ outcome: string }> }>()
    expect(body.results.map((r) => r.outcome)).toEqual(['requeued', 'not-found'])
    await eventually('handled', () => handled.some((h) => h.id === id))
    expect(await fx.ready(dlq())).toBe(0)

    expect(await fx.effects(HANDLER)).toEqual([expect.objectContaining({ message_id: id })])

    const inbox = await read<{ inbox: Array<{ messageId: string; handler: string }> }>(
      `/inbox?messageId=${id}`,
    )
    expect(inbox.inbox).toEqual([
      { messageId: id, handler: HANDLER, receivedAt: expect.any(String) as string },
    ])
    const { actions } = await read<{ actions: Array<Record<string, unknown>> }>('/actions?limit=5')
    expect(actions[0]).toMatchObject({
      id: body.actionId,
      actor: 'alice@ops',
      action: 'dead-letters.requeue',
      ids: [id],
    })
  })
})

describe('dead letters requeued twice, discarded, refused', () => {
  it('when a dead letter is requeued a second time from the DLQ, then the inbox deduplicates it', async () => {
    failing = true
    const id = await deadLetteredMessage()
    failing = false
    const handled = collect(fx.messaging.signals, 'handled')
    await write('/dead-letters/requeue', { queue: fx.queue(HANDLER), messageIds: [id] })
    await eventually('handled', () => handled.some((h) => h.id === id))
    // Put the same message into the DLQ again, as a second dead-lettering would, and requeue it.
    await fx.publishToQueue(dlq(), envelope({ id, data: { n: 7 } }))
    const duplicates = collect(fx.messaging.signals, 'duplicate')
    const again = await write('/dead-letters/requeue', { queue: dlq(), messageIds: [id] })
    expect(again.json<{ results: unknown }>().results).toEqual([{ messageId: id, outcome: 'requeued' }])
    await eventually('duplicate', () => duplicates.some((d) => d.id === id))
    expect((await fx.effects(HANDLER)).filter((e) => e.message_id === id)).toHaveLength(1)
  })

  it('when a dead letter is discarded, then a dry run keeps it and records nothing, the discard removes it and is recorded', async () => {
    failing = true
    const id = await deadLetteredMessage()
    const before = await read<{ actions: unknown[] }>('/actions')
    const dry = await write('/dead-letters/discard', { queue: dlq(), messageIds: [id], dryRun: true })
    expect(dry.json<{ results: unknown }>().results).toEqual([{ messageId: id, outcome: 'would-discard' }])
    expect(await fx.ready(dlq())).toBe(1)
    expect((await read<{ actions: unknown[] }>('/actions')).actions).toHaveLength(before.actions.length)

    const done = await write('/dead-letters/discard', { queue: dlq(), messageIds: [id] })
    expect(done.json<{ results: unknown }>().results).toEqual([{ messageId: id, outcome: 'discarded' }])
    expect(await fx.ready(dlq())).toBe(0)
    const { actions } = await read<{ actions: Array<Record<string, unknown>> }>('/actions')
    expect(actions[0]).toMatchObject({
      action: 'dead-letters.discard',
      actor: 'admin',
      target: dlq(),
      ids: [id],
    })
  })

  it('when the queue is not one of the service, then 404', async () => {
    const res = await write('/dead-letters/requeue', { queue: 'elsewhere.dlq', messageIds: ['x'] })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ error: 'Not Found', details: [{ path: 'body.queue' }] })
  })
})

describe('parked rows', () => {
  it('when a parked row is retried, then a dry run changes nothing, the retry makes it pending, wakes the relay and is recorded', async () => {
    const database = pgDatabase(fx.db.pool)
    const aggregateId = randomUUID()
    const id = await database.transaction((tx) =>
      enqueue(tx, { type: 'p.v1', routingKey: 'p', payload: {}, aggregateId, correlationId: aggregateId }),
    )
    await fx.db.pool.query(
      `UPDATE outbox_message SET failed_at = now(), attempts = 10, last_error = 'refused' WHERE id = $1`,
      [id],
    )
    const { rows } = await read<{ rows: Array<Record<string, unknown>> }>(
      `/parked?aggregateId=${aggregateId}`,
    )
    expect(rows).toEqual([
      expect.objectContaining({ id, state: 'parked', attempts: 10, lastError: 'refused' }),
    ])

    const wakesBefore = wakes.length
    const dry = await write('/parked/retry', { ids: [id], dryRun: true })
    expect(dry.json()).toEqual({ dryRun: true, actionId: null, results: [{ id, outcome: 'would-retry' }] })
    const other = randomUUID()
    const res = await write('/parked/retry', { ids: [id, other] })
    const body = res.json<{ actionId: string; results: unknown }>()
    expect(body.results).toEqual([
      { id, outcome: 'retried' },
      { id: other, outcome: 'not-parked' },
    ])
    // One NOTIFY on the relays' channel; the dry run sent none.
    await eventually('the relays woken', () => wakes.length > wakesBefore)
    expect(wakes.slice(wakesBefore)).toEqual(['test-admin'])
    const row = await fx.db.pool.query(
      'SELECT attempts, failed_at, last_error FROM outbox_message WHERE id = $1',
      [id],
    )
    expect(row.rows[0]).toEqual({ attempts: 0, failed_at: null, last_error: null })
    const { actions } = await read<{ actions: Array<Record<string, unknown>> }>('/actions')
    expect(actions[0]).toMatchObject({ id: body.actionId, action: 'parked.retry', ids: [id] })
  })
})

describe('admin write access', () => {
  const body = { ids: [randomUUID()], dryRun: true }
  const post = (target: FastifyInstance, headers: Record<string, string>, payload = JSON.stringify(body)) =>
    target.inject({ method: 'POST', url: '/admin/messaging/parked/retry', headers, payload })
  const json = { 'content-type': 'application/json' }

  it('when the bearer is missing, then 401 with WWW-Authenticate', async () => {
    const res = await post(app, json)
    expect(res.statusCode).toBe(401)
    expect(res.headers['www-authenticate']).toBe('Bearer')
    expect(res.json()).toMatchObject({ error: 'Unauthorized', details: [{ path: 'headers.authorization' }] })
  })

  it('when the bearer is wrong, then 401 and the response never holds a token', async () => {
    const res = await post(app, { ...json, authorization: 'Bearer wrong-token-wrong-token' })
    expect(res.statusCode).toBe(401)
    expect(res.body).not.toContain('wrong-token')
    expect(res.body).not.toContain(TOKEN)
  })

  it('when no token is configured, then every write is 403 and reads still answer', async () => {
    const res = await post(readOnly, { ...json, authorization: `Bearer ${TOKEN}` })
    expect(res.statusCode).toBe(403)
    expect(res.json()).toMatchObject({ message: 'admin writes are disabled: set ADMIN_TOKEN' })
    expect((await readOnly.inject({ method: 'GET', url: '/admin/messaging/actions' })).statusCode).toBe(200)
  })

  it('when the body is not JSON, then 415', async () => {
    const res = await post(app, { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' }, 'ids=1')
    expect(res.statusCode).toBe(415)
  })

  it('when the actor is malformed, then 400 names the header', async () => {
    const res = await post(app, { ...json, authorization: `Bearer ${TOKEN}`, 'x-admin-actor': '<script>' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ details: [{ path: 'headers.x-admin-actor' }] })
  })

  it('when the body has an unknown field, then 400', async () => {
    const res = await post(
      app,
      { ...json, authorization: `Bearer ${TOKEN}` },
      JSON.stringify({ ...body, all: true }),
    )
    expect(res.statusCode).toBe(400)
  })

  it('when the token is shorter than 16 characters, then the plugin refuses to register', async () => {
    await expect(hostApp(admin, 'short')).rejects.toThrow(RangeError)
  })
})

describe('messaging admin without a broker', () => {
  it('when the broker is unreachable, then the summary says down with null counts and a requeue is 503', async () => {
    const queue = fx.queue(HANDLER)
    const offline = createMessagingAdmin({
      ...fx.options,
      amqpUrl: 'amqp://guest:guest@127.0.0.1:1',
      admin: { brokerWaitMs: 300 },
    })
    const host = await hostApp(offline, TOKEN)
    try {
      const summary = await host.inject({ url: '/admin/messaging/summary' })
      expect(summary.json()).toMatchObject({
        broker: 'down',
        outbox: { parked: expect.any(Number) as number },
        queues: [{ queue, ready: null, consumers: null, deadLettered: null }],
      })
      const requeue = await host.inject({
        method: 'POST',
        url: '/admin/messaging/dead-letters/requeue',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        payload: { queue, messageIds: [randomUUID()] },
      })
      expect(requeue.statusCode).toBe(503)
    } finally {
      await host.close()
      await offline.close()
    }
  })
})
