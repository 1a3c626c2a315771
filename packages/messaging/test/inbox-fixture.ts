/**
 * What the inbox, consumer and topology tests share: a database with the messaging tables and an
 * `effect` table handlers write to, a unique exchange and queue prefix, a confirm-channel publisher
 * of raw envelopes (so a test can send duplicates and poison the relay never would), and cleanup.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import type { ChannelModel, ConfirmChannel, GetMessage } from 'amqplib'
import pg from 'pg'
import {
  eventually,
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { createAmqpConnection, type AmqpConnection } from '../src/amqp/connection.js'
import { createConsumer, type Consumer, type ConsumerOptions } from '../src/inbox/consumer.js'
import { pgDatabase } from '../src/database.js'
import type { Queryable } from '../src/recorder/types.js'
import { createSignals, type Signals } from '../src/signals.js'
import { deadLetterQueueName, declareTopology, queueName } from '../src/topology.js'
import type {
  ConsumedMessage,
  Envelope,
  HandlerDefinition,
  MessageContract,
  SignalMap,
  SignalName,
} from '../src/types.js'

export const MESSAGING_SQL = fileURLToPath(new URL('../sql/messaging.sql', import.meta.url))

/** The payload of the test message type. */
export interface Happened {
  n: number
}

/** `test.happened.v1`, with a hand-made Standard Schema (messaging depends on no schema library). */
export const happened: MessageContract<Happened> = {
  type: 'test.happened.v1',
  routingKey: 'test.happened',
  schema: {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) =>
        typeof (value as Partial<Happened> | null)?.n === 'number'
          ? { value: { n: (value as Happened).n } }
          : { issues: [{ message: 'expected a number', path: ['n'] }] },
    },
  },
}

export type Tx = pg.PoolClient
export type Behaviour = (message: ConsumedMessage<Happened>, tx: Tx) => Promise<void> | void

/** A handler that writes one `effect` row per run, then does `behaviour` (throw, wait, ...). */
export const recordingHandler = (
  name: string,
  behaviour: Behaviour = () => undefined,
  contract: MessageContract<Happened> = happened,
): HandlerDefinition<Tx, Happened> => ({
  name,
  message: contract,
  async handle(message, tx) {
    await insertEffect(tx, name, message)
    await behaviour(message, tx)
  },
})

/** Writes the `effect` row of `handler` running `message`: its id, `n` and attempt. */
export async function insertEffect(
  tx: Tx,
  handler: string,
  message: ConsumedMessage<Happened>,
): Promise<void> {
  await tx.query('INSERT INTO effect (message_id, handler, n, attempt) VALUES ($1, $2, $3, $4)', [
    message.id,
    handler,
    message.payload.n,
    message.attempt,
  ])
}

/**
 * A batch recorder's write: each `test.happened.v1` message's id and `n` into `table` (columns
 * `message_id uuid`, `n integer`, unique on the id) in one statement, skipping ids already there.
 */
export async function insertRecorded(
  db: Queryable,
  table: 'recorded' | 'timeline',
  messages: ReadonlyArray<ConsumedMessage<unknown>>,
): Promise<void> {
  await db.query(
    `INSERT INTO ${table} (message_id, n)
     SELECT m.message_id, m.n FROM jsonb_to_recordset($1::jsonb) AS m(message_id uuid, n integer)
     ON CONFLICT (message_id) DO NOTHING`,
    [JSON.stringify(messages.map((m) => ({ message_id: m.id, n: (m.payload as Happened).n })))],
  )
}

/** A valid envelope of `test.happened.v1` with a fresh id, overridable per attribute. */
export const envelope = (
  overrides: Partial<Record<keyof Envelope, unknown>> = {},
): Record<string, unknown> => ({
  specversion: '1.0',
  id: randomUUID(),
  source: 'test',
  type: happened.type,
  time: new Date().toISOString(),
  datacontenttype: 'application/json',
  correlationid: randomUUID(),
  data: { n: 1 },
  ...overrides,
})

/** Every payload of `name` emitted from now on, in order. */
export function collect<K extends SignalName>(signals: Signals, name: K): SignalMap[K][] {
  const seen: SignalMap[K][] = []
  signals.on(name, (payload) => seen.push(payload))
  return seen
}

/** Polls until a state holds (from @saga/testkit; re-exported for the tests that import this fixture). */
export { eventually }

export interface RunningConsumer {
  consumer: Consumer
  connection: AmqpConnection
  signals: Signals
}

export interface InboxFixture {
  db: TestDatabase
  exchange: string
  prefix: string
  queue(handler: string): string
  /** Publishes a body (an object is sent as JSON, a string as is) on a confirm channel. */
  publish(body: unknown, routingKey?: string): Promise<void>
  /** Publishes a JSON body straight into `queue` (default exchange), with the body's `id` as message id. */
  publishToQueue(queue: string, body: Record<string, unknown>): Promise<void>
  /** Starts a consumer (with topology declaration) on its own connection; stopped by `cleanup`. */
  startConsumer(
    handlers: HandlerDefinition<Tx, Happened>[],
    options?: Partial<ConsumerOptions<Tx>>,
  ): Promise<RunningConsumer>
  effects(
    handler?: string,
  ): Promise<Array<{ message_id: string; handler: string; n: number; attempt: number }>>
  /** Ready messages in a queue (unacked ones are not counted). */
  ready(queue: string): Promise<number>
  /** Deletes a queue behind the consumer's back. */
  deleteQueue(queue: string): Promise<void>
  /**
   * Declares `handler`'s queue and dead-letter queue (marked for cleanup) before any consumer of it
   * runs, so what is published meanwhile waits there.
   */
  declare(handler: HandlerDefinition<Tx, Happened>): Promise<void>
  /**
   * Marks a handler's queue and dead-letter queue, declared under `prefix` by a consumer this
   * fixture did not start (e.g. `createMessaging`), for deletion by `cleanup`.
   */
  adopt(handler: string): void
  /** Takes (and acks) everything in a dead-letter queue. */
  drainDeadLetters(handler: string): Promise<GetMessage[]>
  cleanup(): Promise<void>
}

export async function createInboxFixture(name: string): Promise<InboxFixture> {
  const db = await createTestDatabase({ prefix: name, sqlFiles: [MESSAGING_SQL] })
  await db.pool.query(
    'CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer, attempt integer)',
  )
  const exchange = uniqueName(`${name}_ex`)
  const prefix = uniqueName(name)
  const admin: ChannelModel = await amqp.connect(AMQP_URL)
  admin.on('error', () => undefined)
  const channel: ConfirmChannel = await admin.createConfirmChannel()
  channel.on('error', () => undefined)
  await channel.assertExchange(exchange, 'topic', { durable: true })
  const running: RunningConsumer[] = []
  const queues = new Set<string>()
  const queue = (handler: string): string => queueName(prefix, handler)
  const adopt = (handler: string): void => {
    queues.add(queue(handler)).add(deadLetterQueueName(queue(handler)))
  }

  return {
    db,
    exchange,
    prefix,
    queue,
    async publish(body, routingKey = happened.routingKey) {
      const content = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body))
      const id = (body as { id?: unknown } | null)?.id
      channel.publish(exchange, routingKey, content, {
        persistent: true,
        contentType: 'application/json',
        messageId: typeof id === 'string' ? id : undefined,
      })
      await channel.waitForConfirms()
    },
    async publishToQueue(name, body) {
      channel.sendToQueue(name, Buffer.from(JSON.stringify(body)), {
        persistent: true,
        contentType: 'application/json',
        messageId: typeof body.id === 'string' ? body.id : undefined,
      })
      await channel.waitForConfirms()
    },
    async startConsumer(handlers, options = {}) {
      for (const { name: handler } of handlers) adopt(handler)
      const signals = options.signals ?? createSignals()
      const connection = createAmqpConnection({ url: AMQP_URL, name: `${prefix}-consumer` })
      const consumer = createConsumer<Tx>({
        connection,
        database: pgDatabase(db.pool),
        handlers,
        queuePrefix: prefix,
        declare: { exchange },
        retryBaseMs: 40,
        retryMaxMs: 200,
        ...options,
        signals,
      })
      const entry = { consumer, connection, signals }
      running.push(entry)
      consumer.start()
      connection.start()
      await eventually('consumer consuming', () => consumer.health().consuming)
      return entry
    },
    async effects(handler) {
      const { rows } = await db.pool.query<{
        message_id: string
        handler: string
        n: number
        attempt: number
      }>(
        'SELECT message_id, handler, n, attempt FROM effect WHERE $1::text IS NULL OR handler = $1 ORDER BY id',
        [handler ?? null],
      )
      return rows
    },
    async ready(name) {
      return (await channel.checkQueue(name)).messageCount
    },
    adopt,
    async declare(handler) {
      adopt(handler.name)
      await declareTopology(channel, { exchange, queuePrefix: prefix, handlers: [handler] })
    },
    async deleteQueue(name) {
      await channel.deleteQueue(name)
    },
    async drainDeadLetters(handler) {
      const taken: GetMessage[] = []
      for (;;) {
        const message = await channel.get(deadLetterQueueName(queue(handler)))
        if (!message) return taken
        channel.ack(message)
        taken.push(message)
      }
    },
    async cleanup() {
      for (const { consumer, connection } of running) {
        await consumer.stop()
        await connection.close()
      }
      await admin.close().catch(() => undefined)
      await deleteBrokerObjects({ exchanges: [exchange], queues: [...queues] })
      await db.drop()
    },
  }
}

const run = promisify(execFile)

/**
 * Closes, from the broker's side (`rabbitmqctl close_connection`), every connection whose client
 * named it `name`, as a broker restart or an operator would; returns how many it closed.
 */
export async function closeConnectionsNamed(name: string, reason = 'closed by a test'): Promise<number> {
  const { stdout } = await run('rabbitmqctl', [
    'list_connections',
    '-q',
    '--no-table-headers',
    'pid',
    'client_properties',
  ])
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(`{"connection_name","${name}"}`))
    .map((line) => line.trim().split(/\s+/)[0] as string)
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, reason])
  return pids.length
}

/** The names clients gave their open broker connections (`rabbitmqctl list_connections`). */
export async function connectionNames(): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', [
    'list_connections',
    '-q',
    '--no-table-headers',
    'client_properties',
  ])
  return [...stdout.matchAll(/\{"connection_name","([^"]*)"\}/g)].map((match) => match[1] as string)
}
