import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  TcpProxy,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { followUp } from '../src/inbox/follow-up.js'
import { createMessaging, type Messaging, type MessagingOptions } from '../src/messaging.js'
import type { HealthArea, HealthAreaName } from '../src/observability/health.js'
import type { MetricSample } from '../src/observability/metrics.js'
import { enqueue } from '../src/outbox/enqueue.js'
import type { RecorderDefinition } from '../src/recorder/types.js'
import { deadLetterQueueName, queueName } from '../src/topology.js'
import type { HandlerDefinition } from '../src/types.js'
import { memoryLogger } from '../src/testing/index.js'
import {
  eventually,
  happened,
  insertEffect,
  insertRecorded,
  MESSAGING_SQL,
  type Happened,
  type Tx,
} from './inbox-fixture.js'

const HANDLER = 'follow-up-when-happened'
const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

/** Reacts to `test.happened.v1` with a business row and a `test.followed.v1` in the same transaction. */
const followUpWhenHappened: HandlerDefinition<Tx, Happened> = {
  name: HANDLER,
  message: happened,
  async handle(message, tx) {
    await insertEffect(tx, HANDLER, message)
    await enqueue(tx, {
      type: 'test.followed.v1',
      routingKey: 'test.followed',
      payload: { n: message.payload.n + 1 },
      aggregateId: message.subject,
      ...followUp(message),
    })
  },
}

const RECORDER = 'record-happened'

/** Records `test.happened.v1` into `timeline`, keyed by message id, one statement per batch. */
const recordHappened: RecorderDefinition = {
  name: RECORDER,
  messages: [happened],
  async record(messages, pool) {
    await insertRecorded(pool, 'timeline', messages)
  },
}

let db: TestDatabase
const exchange = uniqueName('messaging_ex')
const prefix = uniqueName('messaging')
const running: Messaging<Tx>[] = []

/** One health area of `messaging`. */
function area(messaging: Messaging<Tx>, name: HealthAreaName): HealthArea {
  const found = messaging.health().areas.find((a) => a.area === name)
  if (!found) throw new Error(`no health area ${name}`)
  return found
}

/** The samples of the counter or gauge named `name`. */
function read(messaging: Messaging<Tx>, name: string): readonly MetricSample[] {
  const metric = messaging.metrics.find((m) => m.name === name)
  if (!metric || metric.kind === 'histogram') throw new Error(`no counter or gauge ${name}`)
  return metric.read()
}

function start(overrides: Partial<MessagingOptions<Tx>> = {}): Messaging<Tx> {
  const messaging = createMessaging<Tx>({
    service: 'alpha',
    database: pgDatabase(db.pool),
    pool: db.pool,
    amqpUrl: AMQP_URL,
    exchange,
    queuePrefix: prefix,
    handlers: [followUpWhenHappened],
    relay: { statsIntervalMs: 100, retentionIntervalMs: 0 },
    consumer: { retryBaseMs: 50, retryMaxMs: 200 },
    ...overrides,
  })
  running.push(messaging)
  return messaging
}

const happenedMessage = (n: number) => ({
  type: happened.type,
  routingKey: happened.routingKey,
  payload: { n },
  aggregateId: `order-${n}`,
  correlationId: `order-${n}`,
  traceparent,
})

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'messaging', sqlFiles: [MESSAGING_SQL] })
  await db.pool.query(
    'CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer, attempt integer)',
  )
  await db.pool.query('CREATE TABLE timeline (message_id uuid PRIMARY KEY, n integer NOT NULL)')
})
afterEach(async () => {
  for (const messaging of running.splice(0)) await messaging.stop()
})
afterAll(async () => {
  const queues = [queueName(prefix, HANDLER), queueName(prefix, RECORDER)]
  await deleteBrokerObjects({
    exchanges: [exchange],
    queues: [...queues, ...queues.map(deadLetterQueueName)],
  })
  await db?.drop()
})

describe('createMessaging', () => {
  it('when a transaction enqueues, then the relay publishes it, the handler reacts, and its follow-up is published', async () => {
    const tap = await tapQueue(AMQP_URL, exchange)
    const messaging = start()
    await messaging.start()
    expect(messaging.health().ok).toBe(true)
    expect(area(messaging, 'broker')).toMatchObject({ ok: true, status: 'up' })
    expect(area(messaging, 'consumer')).toMatchObject({ ok: true, facts: { queues: 1, consuming: 1 } })

    const handled = messaging.signals.waitFor('handled', undefined, 30_000)
    // The tap can see a message before the relay has marked its row published (that follows the confirm).
    const followUpMarked = messaging.signals.waitFor(
      'published',
      (s) => s.type === 'test.followed.v1',
      10_000,
    )
    const id = await messaging.transaction((tx) => enqueue(tx, happenedMessage(1)))
    const [first, second] = await tap.waitForCount(2, 30_000)

    expect(await handled).toEqual({
      id,
      type: happened.type,
      handler: HANDLER,
      correlationId: 'order-1',
      durationMs: expect.any(Number) as number,
    })
    expect(first).toMatchObject({ messageId: id, routingKey: 'test.happened' })
    expect(first!.properties).toMatchObject({
      type: happened.type,
      correlationId: 'order-1',
      contentType: 'application/cloudevents+json; charset=utf-8',
      deliveryMode: 2,
      appId: 'alpha',
    })
    expect(first!.body).toMatchObject({
      specversion: '1.0',
      id,
      source: 'alpha',
      subject: 'order-1',
      data: { n: 1 },
    })
    expect(second!.routingKey).toBe('test.followed')
    expect(second!.body).toMatchObject({
      type: 'test.followed.v1',
      correlationid: 'order-1',
      causationid: id,
      subject: 'order-1',
      data: { n: 2 },
    })
    // A child span of the same trace: same trace id and flags, a new parent id.
    expect((second!.body as { traceparent?: string }).traceparent).toMatch(
      /^00-4bf92f3577b34da6a3ce929d0e0e4736-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$/,
    )
    await followUpMarked
    const { rows: outbox } = await db.pool.query<{ id: string; published: boolean }>(
      'SELECT id, published_at IS NOT NULL AS published FROM outbox_message ORDER BY occurred_at',
    )
    expect(outbox).toEqual([
      { id, published: true },
      { id: second!.messageId, published: true },
    ])
    const { rows: inbox } = await db.pool.query('SELECT message_id, handler FROM inbox_message')
    expect(inbox).toEqual([{ message_id: id, handler: HANDLER }])
    expect(messaging.stats()).toMatchObject({
      brokerUp: 1,
      relay: { publishedTotal: 2 },
      consumer: { handledTotal: 1, byHandler: { [HANDLER]: { handledTotal: 1 } } },
    })
    // The metric descriptors read the same figures, under their Prometheus names.
    expect(read(messaging, 'messaging_broker_up')).toEqual([{ labels: {}, value: 1 }])
    expect(read(messaging, 'messaging_relay_published_total')).toEqual([{ labels: {}, value: 2 }])
    expect(read(messaging, 'messaging_consumer_handled_total')).toEqual([
      { labels: { handler: HANDLER }, value: 1 },
    ])
    expect(read(messaging, 'messaging_consuming')).toEqual([{ labels: {}, value: 1 }])
    await tap.delete()
  })

  it('when a service has a recorder beside its handler, then both get the message, the recorder writes no inbox row, and health and metrics include it', async () => {
    const messaging = start({ recorders: [recordHappened] })
    await messaging.start()
    expect(messaging.health().ok).toBe(true)
    expect(area(messaging, 'consumer').facts).toMatchObject({ queues: 2, consuming: 2 })
    const recorded = messaging.signals.waitFor('handled', (s) => s.handler === RECORDER, 30_000)
    const handled = messaging.signals.waitFor('handled', (s) => s.handler === HANDLER, 30_000)

    const id = await messaging.transaction((tx) => enqueue(tx, happenedMessage(4)))

    expect(await recorded).toMatchObject({ id, handler: RECORDER, correlationId: 'order-4' })
    await handled
    expect((await db.pool.query('SELECT message_id, n FROM timeline')).rows).toEqual([
      { message_id: id, n: 4 },
    ])
    const { rows: inbox } = await db.pool.query('SELECT handler FROM inbox_message WHERE message_id = $1', [
      id,
    ])
    expect(inbox).toEqual([{ handler: HANDLER }])
    expect(read(messaging, 'messaging_recorder_recorded_total')).toEqual([
      { labels: { handler: RECORDER }, value: 1 },
    ])
    expect(messaging.stats().recorder).toEqual({
      recordedTotal: 1,
      batchesTotal: 1,
      splitTotal: 0,
      deadLetteredTotal: 0,
      byHandler: { [RECORDER]: { recordedTotal: 1, batchesTotal: 1, splitTotal: 0, deadLetteredTotal: 0 } },
    })
  })

  it('when a transaction throws, then nothing is enqueued and the error reaches the caller', async () => {
    const messaging = start({ handlers: [], relay: { enabled: false } })
    const before = await db.pool.query('SELECT count(*)::int AS n FROM outbox_message')

    const failing = messaging.transaction(async (tx) => {
      await enqueue(tx, happenedMessage(2))
      throw new Error('validation failed')
    })

    await expect(failing).rejects.toThrow('validation failed')
    expect((await db.pool.query('SELECT count(*)::int AS n FROM outbox_message')).rows).toEqual(before.rows)
  })

  it('when the broker is down at start, then start returns, health says so, and everything resumes when it is back', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', Number(new URL(AMQP_URL).port || 5672))
    proxy.cut()
    const messaging = start({ amqpUrl: proxy.url(AMQP_URL), startWaitMs: 300 })

    await messaging.start()
    expect(messaging.health().ok).toBe(false)
    expect(area(messaging, 'broker')).toMatchObject({
      ok: false,
      status: 'down',
      probe: 'report',
      detail: 'relay connection down; consumer connection down',
    })
    // Waiting for the broker is not a stuck consumer: degraded, never down (a restart would not help).
    expect(area(messaging, 'consumer')).toMatchObject({ ok: false, status: 'degraded', probe: 'liveness' })
    expect(messaging.stats().brokerUp).toBe(0)
    const id = await messaging.transaction((tx) => enqueue(tx, happenedMessage(3)))
    const handled = messaging.signals.waitFor('handled', (s) => s.id === id, 30_000)

    proxy.restore()
    await handled
    await eventually('healthy again', () => messaging.health().ok)

    await messaging.stop()
    expect(area(messaging, 'broker').ok).toBe(false)
    await eventually('every AMQP connection closed', () => proxy.openSockets === 0)
    // The pool stays the caller's.
    expect((await db.pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await proxy.close()
  })

  it('when the broker link is cut for a few seconds, then each connection logs one warn line when it goes and one info line with the downtime when it is back, and no line carries a stack', async () => {
    // Rows earlier tests left unroutable (test.followed has no queue) would log their retries.
    await db.pool.query('DELETE FROM outbox_message WHERE published_at IS NULL')
    const proxy = await TcpProxy.start('127.0.0.1', Number(new URL(AMQP_URL).port || 5672))
    const lines = memoryLogger()
    const messaging = start({ amqpUrl: proxy.url(AMQP_URL), logger: lines, recorders: [recordHappened] })
    await messaging.start()
    await eventually('healthy', () => messaging.health().ok)
    lines.lines.length = 0

    proxy.cut()
    await eventually('the broker area down', () => !area(messaging, 'broker').ok)
    // Several failed reconnect attempts of each connection, each of which must stay below warn.
    const retries = (connection: string): number =>
      lines.lines.filter(
        (line) =>
          line.msg === 'amqp connect failed; retrying' &&
          (line.obj as { connection?: string }).connection === connection,
      ).length
    await eventually(
      'three failed reconnects of each connection',
      () => retries('alpha-consumer') >= 3 && retries('alpha-relay') >= 3,
    )
    proxy.restore()
    await eventually('healthy again', () => messaging.health().ok)
    await messaging.stop()
    await proxy.close()

    const loud = lines.lines.filter((line) => line.level === 'warn' || line.level === 'error')
    const lost = loud.filter((line) => line.msg === 'amqp connection lost')
    expect(lost.map((line) => (line.obj as { connection: string }).connection).sort()).toEqual([
      'alpha-consumer',
      'alpha-relay',
    ])
    // Nothing else at warn or above: no line per queue, per retry or per reconnect attempt.
    expect(loud.map((line) => [line.msg, line.obj])).toEqual(lost.map((line) => [line.msg, line.obj]))
    const back = lines.lines.filter((line) => line.msg?.startsWith('amqp connection back after '))
    expect(back).toHaveLength(2)
    expect(back.every((line) => typeof (line.obj as { downMs?: unknown }).downMs === 'number')).toBe(true)
    // Stacks are for the unexpected: an outage is expected.
    expect(lines.lines.filter((line) => 'err' in line.obj)).toEqual([])
  })
})

describe('createMessaging duplicates', () => {
  it('when a published message is published again, then the copy is skipped, logged at debug and counted in messaging_consumer_duplicates_total', async () => {
    const lines = memoryLogger()
    const messaging = start({ logger: lines })
    await messaging.start()
    const handled = messaging.signals.waitFor('handled', undefined, 30_000)
    const id = await messaging.transaction((tx) => enqueue(tx, happenedMessage(7)))
    expect((await handled).id).toBe(id)
    await eventually('the row marked published', async () => {
      const { rowCount } = await db.pool.query(
        'SELECT 1 FROM outbox_message WHERE id = $1 AND published_at IS NOT NULL',
        [id],
      )
      return rowCount === 1
    })
    const duplicate = messaging.signals.waitFor('duplicate', (s) => s.id === id, 30_000)

    // A forced republish, as an operator's requeue or a relay that lost its mark would make.
    await db.pool.query('UPDATE outbox_message SET published_at = NULL, available_at = now() WHERE id = $1', [
      id,
    ])

    await duplicate
    expect(read(messaging, 'messaging_consumer_duplicates_total')).toEqual([
      { labels: { handler: HANDLER }, value: 1 },
    ])
    const skipped = lines.lines.filter((line) => line.msg === 'duplicate message skipped')
    expect(skipped.map((line) => line.level)).toEqual(['debug'])
    expect(skipped[0]?.obj).toMatchObject({ messageId: id, handler: HANDLER })
    expect(await db.pool.query('SELECT 1 FROM effect WHERE message_id = $1', [id])).toHaveProperty(
      'rowCount',
      1,
    )
  })
})
