import amqp from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { AMQP_URL, deleteBrokerObjects, TcpProxy } from '@saga/testkit'
import { createAmqpConnection, type AmqpConnection } from '../src/amqp/connection.js'
import { createBatchRecorder, type BatchRecorder } from '../src/recorder/recorder.js'
import type { RecorderDefinition } from '../src/recorder/types.js'
import type { Logger } from '../src/types.js'
import { createSignals } from '../src/signals.js'
import { deadLetterQueueName, declareTopology } from '../src/topology.js'
import {
  collect,
  createInboxFixture,
  envelope,
  eventually,
  happened,
  insertRecorded,
  type InboxFixture,
} from './inbox-fixture.js'

let fixture: InboxFixture
beforeAll(async () => {
  fixture = await createInboxFixture('recorder')
  // The recorded fact's own key is the message id (the recorder's dedup); n >= 0 lets a test make
  // one row the database refuses.
  await fixture.db.pool.query(
    'CREATE TABLE recorded (message_id uuid PRIMARY KEY, n integer NOT NULL CHECK (n >= 0))',
  )
})
const RECORDERS = [
  'burst',
  'twice',
  'isolated',
  'requeued',
  'outage',
  'planned',
  'windowed',
  'full',
  'reopened',
  'versions',
]
afterAll(async () => {
  if (!fixture) return
  const queues = RECORDERS.map((name) => fixture.queue(name))
  await deleteBrokerObjects({ queues: [...queues, ...queues.map(deadLetterQueueName)] })
  await fixture.cleanup()
})

const silent = { debug() {}, info() {}, warn() {}, error() {} }

/** Records `test.happened.v1` into `recorded` in one statement per batch; counts the calls' sizes. */
function recordedDefinition(name: string, windowMs?: number): RecorderDefinition & { sizes: number[] } {
  const sizes: number[] = []
  return {
    name,
    sizes,
    windowMs,
    messages: [happened],
    async record(messages, db) {
      sizes.push(messages.length)
      await insertRecorded(db, 'recorded', messages)
    },
  }
}

/** Starts a recorder; pass `signals` to collect from them before the first delivery can arrive. */
async function startRecorder(
  definition: RecorderDefinition,
  options: {
    signals?: ReturnType<typeof createSignals>
    db?: pg.Pool
    maxBatch?: number
    logger?: Logger
  } = {},
): Promise<{
  recorder: BatchRecorder
  connection: AmqpConnection
  signals: ReturnType<typeof createSignals>
}> {
  const { signals = createSignals(), db = fixture.db.pool, maxBatch, logger = silent } = options
  const connection = createAmqpConnection({ url: AMQP_URL, name: `${fixture.prefix}-recorder` })
  const recorder = createBatchRecorder({
    definition,
    connection,
    db,
    exchange: fixture.exchange,
    queuePrefix: fixture.prefix,
    signals,
    logger,
    policy: { baseMs: 40, maxMs: 200 },
    ...(maxBatch === undefined ? {} : { maxBatch }),
  })
  recorder.start()
  connection.start()
  await eventually('recorder consuming', () => recorder.consuming)
  return { recorder, connection, signals }
}

/** Starts `definition`'s recorder once, so its queue is declared, and stops it: what is published next waits there. */
async function declareQueue(definition: RecorderDefinition): Promise<void> {
  const first = await startRecorder(definition)
  await first.recorder.stop()
  await first.connection.close()
}

const recordedIds = async (ids: string[]): Promise<string[]> =>
  (
    await fixture.db.pool.query<{ message_id: string }>(
      'SELECT message_id FROM recorded WHERE message_id = ANY($1::uuid[]) ORDER BY message_id',
      [ids],
    )
  ).rows.map((row) => row.message_id)

describe('batch recorder', () => {
  it("when it starts, then its queue and DLQ are the topology plan's: declaring the plan again is accepted", async () => {
    const definition = recordedDefinition('planned')
    const { recorder, connection } = await startRecorder(definition)
    const amqpConnection = await amqp.connect(AMQP_URL)
    try {
      const channel = await amqpConnection.createChannel()
      // Any other arguments (dead-letter route, delivery limit, type) would be refused with 406.
      const spec = { exchange: fixture.exchange, queuePrefix: fixture.prefix, handlers: [] }
      await declareTopology(channel, { ...spec, recorders: [definition] })
      expect((await channel.checkQueue(deadLetterQueueName(recorder.queue))).queue).toBe(
        deadLetterQueueName(recorder.queue),
      )
    } finally {
      await amqpConnection.close()
      await recorder.stop()
      await connection.close()
    }
  })

  it('when 60 messages wait in its queue, then each is recorded once, in fewer statements than messages, and all are acked', async () => {
    const definition = recordedDefinition('burst')
    // Let 60 messages pile up in the declared queue so they arrive together.
    await declareQueue(definition)
    const bodies = Array.from({ length: 60 }, (_, n) => envelope({ data: { n } }))
    for (const body of bodies) await fixture.publish(body)

    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const { recorder, connection } = await startRecorder(definition, { signals })
    await eventually('all 60 recorded', () => handled.length === 60)
    await recorder.stop()
    await connection.close()

    const ids = bodies.map((b) => b.id as string)
    expect(await recordedIds(ids)).toEqual([...ids].sort())
    expect(recorder.counters.recordedTotal).toBe(60)
    expect(recorder.counters.batchesTotal).toBeLessThan(60)
    expect(Math.max(...definition.sizes)).toBeGreaterThan(1)
    // Stopped with nothing unacked: whatever was not acked would be back in the queue now.
    expect(await fixture.ready(fixture.queue('burst'))).toBe(0)
  })

  it('when its definition has a wait window, then messages arriving one at a time within it are recorded in one batch', async () => {
    // Long enough for five confirmed publishes on a loaded machine, so all five fall in one window.
    const WINDOW_MS = 8_000
    const definition = recordedDefinition('windowed', WINDOW_MS)
    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const { recorder, connection } = await startRecorder(definition, { signals })
    const bodies = Array.from({ length: 5 }, (_, n) => envelope({ data: { n } }))
    const started = performance.now()
    for (const body of bodies) {
      await fixture.publish(body)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await eventually('all 5 recorded', () => handled.length === 5)
    const waited = performance.now() - started
    await recorder.stop()
    await connection.close()

    expect(definition.sizes).toEqual([5])
    // The first delivery started the window; nothing was written before it closed.
    expect(waited).toBeGreaterThanOrEqual(WINDOW_MS - 100)
    const ids = bodies.map((b) => b.id as string)
    expect(await recordedIds(ids)).toEqual([...ids].sort())
  })

  it('when a batch fills inside its wait window, then it is written at once, and the rest waits for its own window', async () => {
    const definition = recordedDefinition('full', 30_000)
    await declareQueue(definition)
    const bodies = Array.from({ length: 6 }, (_, n) => envelope({ data: { n } }))
    for (const body of bodies) await fixture.publish(body)

    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const { recorder, connection } = await startRecorder(definition, { signals, maxBatch: 3 })
    // Far sooner than the 30 s window: two full batches.
    await eventually('two full batches recorded', () => handled.length === 6)
    expect(definition.sizes).toEqual([3, 3])
    await fixture.publish(envelope({ data: { n: 6 } }))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(handled).toHaveLength(6)
    // Stopping leaves the waiting delivery unacked: the broker keeps it for the next consumer.
    await recorder.stop()
    await connection.close()
    await eventually(
      'the waiting delivery back in the queue',
      async () => (await fixture.ready(fixture.queue('full'))) === 1,
    )
  })

  it("when its channel is replaced while a flush is still writing, then the new channel's deliveries are recorded once that flush ends", async () => {
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const sizes: number[] = []
    const definition: RecorderDefinition = {
      name: 'reopened',
      messages: [happened],
      async record(messages, db) {
        sizes.push(messages.length)
        if (sizes.length === 1) await gate
        await insertRecorded(db, 'recorded', messages)
      },
    }
    const said: string[] = []
    const logger = { ...silent, warn: (_: object, msg?: string) => void said.push(msg ?? '') }
    const { recorder, connection } = await startRecorder(definition, { logger })
    try {
      await fixture.publish(envelope({ data: { n: 1 } }))
      await eventually('the first flush is writing', () => sizes.length === 1)
      // Deleting the queue cancels the consumer; the recorder declares it again on a new channel.
      await fixture.deleteQueue(recorder.queue)
      await eventually('the broker cancelled the consumer', () =>
        said.includes('consumer cancelled by the broker'),
      )
      await eventually('consuming the redeclared queue', () => recorder.consuming)
      const second = envelope({ data: { n: 2 } })
      await fixture.publish(second)
      await eventually('the second delivered to the recorder, unacked', async () => {
        return (await fixture.ready(recorder.queue)) === 0
      })
      // Its flush waits for the first one, still writing for the channel that is gone.
      expect(sizes).toEqual([1])
      release()
      await eventually('the second recorded', async () => {
        return (await recordedIds([second.id as string])).length === 1
      })
    } finally {
      release()
      await recorder.stop()
      await connection.close()
    }
  })

  it('when the same message is delivered twice, then it is recorded once', async () => {
    const { recorder, connection, signals } = await startRecorder(recordedDefinition('twice'))
    const handled = collect(signals, 'handled')
    const body = envelope({ data: { n: 7 } })
    await fixture.publish(body)
    await fixture.publish(body)
    await eventually('both deliveries settled', () => handled.length === 2)
    await recorder.stop()
    await connection.close()

    expect(await recordedIds([body.id as string])).toEqual([body.id])
    expect(await fixture.ready(fixture.queue('twice'))).toBe(0)
  })

  it('when a message is sent straight to its queue (as `order dlq requeue` does), then it is recorded by its type', async () => {
    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const { recorder, connection } = await startRecorder(recordedDefinition('requeued'), { signals })
    const body = envelope({ data: { n: 3 } })
    // The default exchange routes by queue name, so the routing key is the queue's, not the event's.
    const sender = await amqp.connect(AMQP_URL)
    const channel = await sender.createConfirmChannel()
    channel.sendToQueue(fixture.queue('requeued'), Buffer.from(JSON.stringify(body)), {
      type: happened.type,
      messageId: body.id as string,
      persistent: true,
    })
    await channel.waitForConfirms()
    await sender.close()
    await eventually('recorded', () => handled.length === 1)
    await recorder.stop()
    await connection.close()

    expect(await recordedIds([body.id as string])).toEqual([body.id])
  })

  it('when the database is unreachable, then deliveries stay unacked, nothing is dead-lettered, and all are recorded once it is back', async () => {
    const url = new URL(fixture.db.url)
    const proxy = await TcpProxy.start(url.hostname, Number(url.port || 5432))
    const pool = new pg.Pool({ connectionString: proxy.url(fixture.db.url), max: 2 })
    pool.on('error', () => undefined)
    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const dead = collect(signals, 'deadLettered')
    const { recorder, connection } = await startRecorder(recordedDefinition('outage'), { signals, db: pool })
    try {
      proxy.cut()
      const bodies = Array.from({ length: 5 }, (_, n) => envelope({ data: { n } }))
      for (const body of bodies) await fixture.publish(body)
      // Delivered and waiting on the database: none may be acked or dead-lettered meanwhile.
      await eventually('the deliveries left the queue for the recorder', async () => {
        return (await fixture.ready(fixture.queue('outage'))) === 0
      })
      expect(handled).toEqual([])
      proxy.restore()
      await eventually('all 5 recorded after the database came back', () => handled.length === 5, 20_000)
      expect(dead).toEqual([])
      const ids = bodies.map((b) => b.id as string)
      expect(await recordedIds(ids)).toEqual([...ids].sort())
    } finally {
      await recorder.stop()
      await connection.close()
      await pool.end()
      await proxy.close()
    }
    expect(await fixture.ready(fixture.queue('outage'))).toBe(0)
  })

  it('when an invalid message and a row the database refuses are among valid ones, then both are dead-lettered with the reason and the rest are recorded', async () => {
    const definition = recordedDefinition('isolated')
    await declareQueue(definition)
    const good = Array.from({ length: 5 }, (_, n) => envelope({ data: { n } }))
    const refused = envelope({ data: { n: -1 } })
    const invalid = envelope({ data: { n: 'not a number' } })
    for (const body of [good[0]!, good[1]!, refused, good[2]!, invalid, good[3]!, good[4]!])
      await fixture.publish(body)

    const signals = createSignals()
    const dead = collect(signals, 'deadLettered')
    const handled = collect(signals, 'handled')
    const { recorder, connection } = await startRecorder(definition, { signals })
    await eventually('5 recorded and 2 dead-lettered', () => handled.length === 5 && dead.length === 2)
    await recorder.stop()
    await connection.close()

    const goodIds = good.map((b) => b.id as string)
    expect(await recordedIds([...goodIds, refused.id as string])).toEqual([...goodIds].sort())
    const letters = await fixture.drainDeadLetters('isolated')
    const reasons = Object.fromEntries(
      letters.map((m) => [
        m.properties.messageId as string,
        String(m.properties.headers?.['x-dead-letter-reason']),
      ]),
    )
    expect(reasons[refused.id as string]).toMatch(/recording failed: .*check constraint/)
    expect(reasons[invalid.id as string]).toMatch(/invalid payload: n: expected a number/)
    expect(letters.every((m) => m.properties.headers?.['x-dead-letter-handler'] === 'isolated')).toBe(true)
    expect(await fixture.ready(fixture.queue('isolated'))).toBe(0)
    expect(await fixture.ready(deadLetterQueueName(fixture.queue('isolated')))).toBe(0)
  })
})

describe('batch recorder and versions', () => {
  it('when a newer and an older version of a recorded type come on its routing key, then both are recorded, none dead-lettered', async () => {
    const definition = recordedDefinition('versions')
    const signals = createSignals()
    const handled = collect(signals, 'handled')
    const deadLettered = collect(signals, 'deadLettered')
    const { recorder, connection } = await startRecorder(definition, { signals })
    // v2 adds a field the v1 schema knows nothing of; v0 is older than the contract the recorder has.
    const newer = envelope({ type: 'test.happened.v2', data: { n: 7, unit: 'pcs' } })
    const older = envelope({ type: 'test.happened.v0', data: { n: 8 } })
    await fixture.publish(newer)
    await fixture.publish(older)
    await eventually('both recorded', () => handled.length === 2)
    await recorder.stop()
    await connection.close()
    expect(handled.map((h) => h.type).sort()).toEqual(['test.happened.v0', 'test.happened.v2'])
    expect(await recordedIds([newer.id as string, older.id as string])).toEqual(
      [newer.id as string, older.id as string].sort(),
    )
    expect(deadLettered).toEqual([])
    expect(await fixture.drainDeadLetters('versions')).toEqual([])
  })
})
