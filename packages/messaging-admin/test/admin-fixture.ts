/**
 * What the admin tests share, built only from the packages' public entry points as a service
 * builds them: a database with both packages' tables and an `effect` table handlers write to, one
 * options object given to `createMessaging` (the consumer; no relay, so rows stay where a test puts
 * them) and to `createMessagingAdmin`, a confirm-channel publisher of raw envelopes (so a test can
 * put a message straight into a queue), and cleanup.
 */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import {
  eventually,
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import {
  createMessaging,
  type HandlerDefinition,
  type Messaging,
  type MessagingOptions,
  type MessageContract,
} from '@saga/messaging'
import { type SignalMap, type SignalName, type Signals } from '@saga/messaging/parts'
import { deadLetterQueueName, queueName } from '@saga/messaging/parts'
import type { MessagingAdmin } from '../src/index.js'
import { messagingAdminPlugin } from '../src/fastify/index.js'

const resolve = createRequire(import.meta.url).resolve
/** The core's tables, as a service resolves them. */
export const MESSAGING_SQL = resolve('@saga/messaging/sql/messaging.sql')
/** This package's table. */
export const MESSAGING_ADMIN_SQL = fileURLToPath(new URL('../sql/messaging-admin.sql', import.meta.url))

/** The payload of the test message type. */
export interface Happened {
  n: number
}

/** `test.happened.v1`, with a hand-made Standard Schema (no schema library needed). */
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

/** A handler that writes one `effect` row per run, then runs `behaviour` (which may throw). */
export const recordingHandler = (
  name: string,
  behaviour: () => void = () => undefined,
): HandlerDefinition<pg.PoolClient, Happened> => ({
  name,
  message: happened,
  async handle(message, tx) {
    await tx.query('INSERT INTO effect (message_id, handler, n) VALUES ($1, $2, $3)', [
      message.id,
      name,
      message.payload.n,
    ])
    behaviour()
  },
})

/** A valid CloudEvent of `test.happened.v1` with a fresh id, overridable per attribute. */
export const envelope = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
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

/** Every payload of signal `name` emitted from now on, in order. */
export function collect<K extends SignalName>(signals: Signals, name: K): SignalMap[K][] {
  const seen: SignalMap[K][] = []
  signals.on(name, (payload) => seen.push(payload))
  return seen
}

/** Polls until a state holds (from @saga/testkit; re-exported for the tests that import this fixture). */
export { eventually }

export interface AdminFixture {
  db: TestDatabase
  /** The one options object of `createMessaging` and `createMessagingAdmin`. */
  options: MessagingOptions
  messaging: Messaging
  queue(handler: string): string
  /** Publishes `body` as JSON to the exchange (routing key of `test.happened.v1`) on a confirm channel. */
  publish(body: Record<string, unknown>): Promise<void>
  /** Publishes `body` as JSON straight into `queue` (default exchange), with its `id` as message id. */
  publishToQueue(queue: string, body: Record<string, unknown>): Promise<void>
  /** The `effect` rows of `handler`. */
  effects(handler: string): Promise<Array<{ message_id: string; handler: string; n: number }>>
  /** Ready messages in a queue (unacked ones are not counted). */
  ready(queue: string): Promise<number>
  cleanup(): Promise<void>
}

/**
 * Starts `createMessaging` with `handlers` (consumer settings `consumer`, relay off) on a fresh
 * database with both packages' tables, under a unique exchange and queue prefix.
 */
export async function createAdminFixture(
  name: string,
  handlers: HandlerDefinition<pg.PoolClient, Happened>[],
  consumer: MessagingOptions['consumer'] = {},
): Promise<AdminFixture> {
  const db = await createTestDatabase({ prefix: name, sqlFiles: [MESSAGING_SQL, MESSAGING_ADMIN_SQL] })
  await db.pool.query(
    'CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer)',
  )
  const exchange = uniqueName(`${name}_ex`)
  const queuePrefix = uniqueName(name)
  const options: MessagingOptions = {
    service: 'test',
    pool: db.pool,
    amqpUrl: AMQP_URL,
    exchange,
    queuePrefix,
    handlers,
    relay: { enabled: false },
    consumer: { retryBaseMs: 40, retryMaxMs: 200, ...consumer },
  }
  const connection: ChannelModel = await amqp.connect(AMQP_URL)
  connection.on('error', () => undefined)
  const channel: ConfirmChannel = await connection.createConfirmChannel()
  channel.on('error', () => undefined)
  await channel.assertExchange(exchange, 'topic', { durable: true })
  const messaging = createMessaging(options)
  await messaging.start()
  await eventually('consumer consuming', () => messaging.health().areas.every((a) => a.ok))
  const queue = (handler: string): string => queueName(queuePrefix, handler)
  const send = async (exchangeName: string, key: string, body: Record<string, unknown>) => {
    channel.publish(exchangeName, key, Buffer.from(JSON.stringify(body)), {
      persistent: true,
      contentType: 'application/json',
      messageId: typeof body.id === 'string' ? body.id : undefined,
      // As the relay publishes: the AMQP type is the CloudEvent's.
      type: typeof body.type === 'string' ? body.type : undefined,
    })
    await channel.waitForConfirms()
  }
  return {
    db,
    options,
    messaging,
    queue,
    publish: (body) => send(exchange, happened.routingKey, body),
    publishToQueue: (name, body) => send('', name, body),
    async effects(handler) {
      const { rows } = await db.pool.query<{ message_id: string; handler: string; n: number }>(
        'SELECT message_id, handler, n FROM effect WHERE handler = $1 ORDER BY id',
        [handler],
      )
      return rows
    },
    async ready(name) {
      return (await channel.checkQueue(name)).messageCount
    },
    async cleanup() {
      await messaging.stop()
      await connection.close().catch(() => undefined)
      const queues = handlers.flatMap((h) => [queue(h.name), deadLetterQueueName(queue(h.name))])
      await deleteBrokerObjects({ exchanges: [exchange], queues })
      await db.drop()
    },
  }
}

/**
 * A host app as a service builds it: the one error shape `{ error, message, details }` for 4xx
 * (validation errors and errors carrying `statusCode` and `details`), and the admin plugin.
 */
export async function hostApp(admin: MessagingAdmin, token: string | undefined): Promise<FastifyInstance> {
  const app = Fastify()
  app.setErrorHandler((error: FastifyError & { details?: unknown }, _request, reply) => {
    const statusCode = error.statusCode ?? 500
    const details = error.validation
      ? error.validation.map((v) => ({
          path: `${error.validationContext}${v.instancePath}`,
          issue: v.message,
        }))
      : (error.details ?? [])
    return reply.code(statusCode).send({ error: STATUS_CODES[statusCode], message: error.message, details })
  })
  await app.register(messagingAdminPlugin, { admin, token })
  await app.ready()
  return app
}
