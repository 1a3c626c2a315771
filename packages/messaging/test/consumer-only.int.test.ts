import { readFile } from 'node:fs/promises'
import amqp from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { createMessaging, type Messaging } from '../src/messaging.js'
import { memoryLogger } from '../src/testing/index.js'
import { deadLetterQueueName, queueName } from '../src/topology.js'
import {
  connectionNames,
  envelope,
  eventually,
  happened,
  MESSAGING_SQL,
  recordingHandler,
  type Tx,
} from './inbox-fixture.js'

const HANDLER = 'record-when-happened'
const service = uniqueName('consumer_only')
const exchange = uniqueName('consumer_only_ex')
let db: TestDatabase
let messaging: Messaging<Tx> | undefined

/** The statements of messaging.sql about the inbox alone: what the header says a consumer needs. */
async function inboxStatements(): Promise<string> {
  const sql = (await readFile(MESSAGING_SQL, 'utf8'))
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
  return sql
    .split(';')
    .filter((statement) => statement.includes('inbox_message'))
    .join(';\n')
}

/** Publishes `body` to the exchange as another service's relay would, confirmed. */
async function publish(body: Record<string, unknown>): Promise<void> {
  const connection = await amqp.connect(AMQP_URL)
  try {
    const channel = await connection.createConfirmChannel()
    channel.publish(exchange, happened.routingKey, Buffer.from(JSON.stringify(body)), {
      persistent: true,
      contentType: 'application/json',
      messageId: String(body.id),
    })
    await channel.waitForConfirms()
  } finally {
    await connection.close()
  }
}

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'consumer_only' })
  await db.pool.query(await inboxStatements())
  await db.pool.query(
    'CREATE TABLE effect (id bigserial PRIMARY KEY, message_id uuid NOT NULL, handler text NOT NULL, n integer, attempt integer)',
  )
})
afterAll(async () => {
  await messaging?.stop()
  const queue = queueName(service, HANDLER)
  await deleteBrokerObjects({ exchanges: [exchange], queues: [queue, deadLetterQueueName(queue)] })
  await db?.drop()
})

describe('a consumer-only service (relay.enabled: false)', () => {
  it('when its database has only the inbox table, then it consumes, deduplicates, keeps the inbox trimmed, opens no relay connection and is healthy', async () => {
    const { rows: tables } = await db.pool.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    )
    expect(tables.map((t) => t.tablename)).toEqual(['effect', 'inbox_message'])
    // An inbox row past the retention: the consumer's own retention timer deletes it.
    await db.pool.query(
      `INSERT INTO inbox_message (message_id, handler, received_at)
       VALUES ('00000000-0000-4000-8000-000000000001', 'old', now() - interval '8 days')`,
    )
    const lines = memoryLogger()
    messaging = createMessaging<Tx>({
      service,
      pool: db.pool,
      amqpUrl: AMQP_URL,
      exchange,
      handlers: [recordingHandler(HANDLER)],
      logger: lines,
      relay: { enabled: false, retentionIntervalMs: 100 },
    })
    await messaging.start()
    const message = envelope()
    const handled = messaging.signals.waitFor('handled', (s) => s.id === message.id, 30_000)
    const duplicate = messaging.signals.waitFor('duplicate', (s) => s.id === message.id, 30_000)

    await publish(message)
    await publish(message)

    await handled
    await duplicate
    const { rows: effects } = await db.pool.query('SELECT message_id FROM effect')
    expect(effects).toEqual([{ message_id: message.id }])
    await eventually('the expired inbox row deleted', async () => {
      const { rowCount } = await db.pool.query("SELECT 1 FROM inbox_message WHERE handler = 'old'")
      return rowCount === 0
    })
    const { rows: inbox } = await db.pool.query('SELECT message_id FROM inbox_message')
    expect(inbox).toEqual([{ message_id: message.id }])
    expect(messaging.health()).toMatchObject({ ok: true })
    const names = await connectionNames()
    expect(names).toContain(`${service}-consumer`)
    expect(names).not.toContain(`${service}-relay`)
    // No statement failed for want of the outbox table (stats, claims, LISTEN, retention).
    expect(lines.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
    expect(lines.lines.some((line) => /outbox/i.test(line.msg ?? ''))).toBe(false)
  })
})
