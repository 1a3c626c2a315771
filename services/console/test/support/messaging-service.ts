/**
 * A real service for the console's bulk-repair tests: `@saga/messaging` consuming one handler on a
 * database of its own and unique broker names, with `@saga/messaging-admin`'s routes behind the
 * service kit's error shape, listening on an ephemeral port. The handler fails while `failing` is
 * set, so a test makes dead letters by publishing while it fails and gets them handled by clearing it.
 */
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib'
import type pg from 'pg'
import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { createMessaging, type MessageContract, type Messaging } from '@saga/messaging'
import { deadLetterQueueName, queueName, type SignalMap } from '@saga/messaging/parts'
import { createMessagingAdmin, type MessagingAdmin } from '@saga/messaging-admin'
import { messagingAdminPlugin } from '@saga/messaging-admin/fastify'
import { createServiceApp } from '@saga/service-kit'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  eventually,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'

const resolve = createRequire(import.meta.url).resolve

/** The test message: `{ n }`, validated by zod (a Standard Schema). */
const happened: MessageContract<{ n: number }> = {
  type: 'test.happened.v1',
  routingKey: 'test.happened',
  schema: z.object({ n: z.number() }),
}

/** A running messaging service. */
export interface MessagingService {
  url: string
  /** The handler's name (its queue is `<prefix>.<handler>`). */
  handler: string
  db: TestDatabase
  messaging: Messaging
  /** While true the handler throws `Downstream is down`. */
  failing: boolean
  /** Publishes `count` messages (each a fresh id) and waits until every one is dead-lettered. */
  deadLetter(count: number): Promise<string[]>
  /** Message ids the handler has handled (one `effect` row each). */
  handled(): Promise<string[]>
  /** Messages waiting in the handler's dead-letter queue. */
  deadLettered(): Promise<number>
  close(): Promise<void>
}

/** Publishes `count` test messages (fresh ids) to `exchange` and waits until each is dead-lettered. */
async function publishDeadLetters(
  messaging: Messaging,
  channel: ConfirmChannel,
  exchange: string,
  count: number,
): Promise<string[]> {
  const dead = new Set<string>()
  messaging.signals.on('deadLettered', (payload: SignalMap['deadLettered']) => {
    if (payload.id !== undefined) dead.add(payload.id)
  })
  const ids = Array.from({ length: count }, () => randomUUID())
  for (const [n, id] of ids.entries()) {
    const body = {
      specversion: '1.0',
      id,
      source: 'test',
      type: happened.type,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      correlationid: randomUUID(),
      data: { n },
    }
    channel.publish(exchange, happened.routingKey, Buffer.from(JSON.stringify(body)), {
      persistent: true,
      contentType: 'application/json',
      messageId: id,
      type: happened.type,
    })
  }
  await channel.waitForConfirms()
  await eventually(`${count} dead-lettered`, () => ids.every((id) => dead.has(id)), 60_000)
  return ids
}

/** Starts a messaging service named `service` whose admin writes need `token`. */
export async function startMessagingService(service: string, token: string): Promise<MessagingService> {
  const db = await createTestDatabase({
    prefix: `console_${service}`,
    sqlFiles: [
      resolve('@saga/messaging/sql/messaging.sql'),
      resolve('@saga/messaging-admin/sql/messaging-admin.sql'),
    ],
  })
  await db.pool.query('CREATE TABLE effect (message_id uuid PRIMARY KEY)')
  const exchange = uniqueName(`console_${service}_ex`)
  const queuePrefix = uniqueName(`console_${service}`)
  const handler = 'record-when-happened'
  const state = { failing: true }
  const options = {
    service,
    pool: db.pool,
    amqpUrl: AMQP_URL,
    exchange,
    queuePrefix,
    relay: { enabled: false },
    consumer: { maxAttempts: 1, retryBaseMs: 20, retryMaxMs: 100 },
    handlers: [
      {
        name: handler,
        message: happened,
        async handle(message: { id: string }, tx: pg.PoolClient) {
          if (state.failing) throw new Error('Downstream is down')
          await tx.query('INSERT INTO effect (message_id) VALUES ($1)', [message.id])
        },
      },
    ],
  }
  const messaging = createMessaging(options)
  await messaging.start()
  await eventually('the consumer consuming', () => messaging.health().areas.every((a) => a.ok))
  const admin: MessagingAdmin = createMessagingAdmin(options)
  const app = await createServiceApp({ service, logLevel: 'silent', fastify: { logger: false } })
  app.get('/health/live', () => ({ status: 'live', checks: {} }))
  app.get('/health/ready', () => ({ status: 'ready', checks: {} }))
  await app.register(messagingAdminPlugin, { admin, token })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const connection: ChannelModel = await amqp.connect(AMQP_URL)
  const channel: ConfirmChannel = await connection.createConfirmChannel()
  const dlq = deadLetterQueueName(queueName(queuePrefix, handler))

  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    handler,
    db,
    messaging,
    get failing() {
      return state.failing
    },
    set failing(value: boolean) {
      state.failing = value
    },
    deadLetter: (count) => publishDeadLetters(messaging, channel, exchange, count),
    async handled() {
      const { rows } = await db.pool.query<{ message_id: string }>('SELECT message_id FROM effect')
      return rows.map((row) => row.message_id)
    },
    async deadLettered() {
      return (await channel.checkQueue(dlq)).messageCount
    },
    async close() {
      await app.close()
      await admin.close()
      await messaging.stop()
      await connection.close().catch(() => undefined)
      await deleteBrokerObjects({ exchanges: [exchange], queues: [queueName(queuePrefix, handler), dlq] })
      await db.drop()
    },
  }
}
