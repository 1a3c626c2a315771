/**
 * The wire format of the relay, pinned: fixed outbox rows (ids, times, headers), a relay publishing
 * them, and a raw capture of what reached the broker (the exact body bytes and the AMQP
 * properties). `capture.ts` writes one build's capture (`golden-v1.json`: the build before CloudEvents
 * content type and `dataschema`; `golden-v2.json`: this one); the wire test checks what changed
 * between them and that this build consumes both.
 */
import amqp from 'amqplib'
import type pg from 'pg'
import { AMQP_URL, deleteBrokerObjects, uniqueName } from '@saga/testkit'

/** One outbox row as a producer of the golden build wrote it. */
export const WIRE_ROWS = [
  {
    id: '01900000-0000-7000-8000-000000000001',
    type: 'test.happened.v1',
    routing_key: 'test.happened',
    payload: { n: 1, text: 'ünïcödé ✓', nested: { list: [1, 2.5, null, true] } },
    headers: {
      correlationId: 'order-1',
      causationId: '01900000-0000-7000-8000-0000000000aa',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=value',
      occurredAt: '2026-01-31T12:00:00.123Z',
    },
    aggregate_id: 'order-1',
    occurred_at: '2026-01-31T12:00:00.456Z',
  },
  {
    id: '01900000-0000-7000-8000-000000000002',
    type: 'test.happened.v1',
    routing_key: 'test.happened',
    payload: { n: 2 },
    headers: { correlationId: 'order-2' },
    aggregate_id: null,
    occurred_at: '2026-01-31T12:00:01.000Z',
  },
  {
    id: '01900000-0000-7000-8000-000000000003',
    type: 'test.happened.v1',
    routing_key: 'test.happened',
    payload: { n: 3 },
    headers: { correlationId: 'order-3', dataschema: 'urn:test:event:test.happened.v1' },
    aggregate_id: 'order-3',
    occurred_at: '2026-01-31T12:00:02.000Z',
  },
] as const

/** What reached the broker for one row. */
export interface WireMessage {
  routingKey: string
  /** The body exactly as published (UTF-8). */
  body: string
  properties: {
    messageId: unknown
    type: unknown
    correlationId: unknown
    contentType: unknown
    contentEncoding: unknown
    deliveryMode: unknown
    appId: unknown
    timestamp: unknown
    headers: unknown
  }
}

/** Inserts the fixed rows into `pool`'s outbox, pending. */
export async function insertWireRows(pool: pg.Pool): Promise<void> {
  for (const row of WIRE_ROWS) {
    await pool.query(
      `INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id, occurred_at)
       VALUES ($1::uuid, $2, $3, $4::jsonb, $5::jsonb, $6, $7::timestamptz)`,
      [
        row.id,
        row.type,
        row.routing_key,
        JSON.stringify(row.payload),
        JSON.stringify(row.headers),
        row.aggregate_id,
        row.occurred_at,
      ],
    )
  }
}

/**
 * A queue bound to every key of `exchange` (declared here), whose messages `take` returns in
 * publish order with their raw bodies; `close` deletes it and the exchange.
 */
export async function rawTap(exchange: string) {
  const connection = await amqp.connect(AMQP_URL)
  const channel = await connection.createChannel()
  await channel.assertExchange(exchange, 'topic', { durable: true })
  const queue = uniqueName('wire_tap')
  await channel.assertQueue(queue, { exclusive: true, durable: false })
  await channel.bindQueue(queue, exchange, '#')
  return {
    async take(count: number, timeoutMs = 10_000): Promise<WireMessage[]> {
      const taken: WireMessage[] = []
      const deadline = Date.now() + timeoutMs
      while (taken.length < count) {
        if (Date.now() > deadline)
          throw new Error(`only ${taken.length} of ${count} messages reached the tap`)
        const message = await channel.get(queue, { noAck: true })
        if (!message) {
          await new Promise((resolve) => setTimeout(resolve, 25))
          continue
        }
        const p = message.properties
        taken.push({
          routingKey: message.fields.routingKey,
          body: message.content.toString('utf8'),
          properties: {
            messageId: p.messageId,
            type: p.type,
            correlationId: p.correlationId,
            contentType: p.contentType,
            contentEncoding: p.contentEncoding,
            deliveryMode: p.deliveryMode,
            appId: p.appId,
            timestamp: p.timestamp,
            headers: p.headers,
          },
        })
      }
      return taken
    },
    async close(): Promise<void> {
      await connection.close().catch(() => undefined)
      await deleteBrokerObjects({ exchanges: [exchange] })
    },
  }
}

/** A build's `createRelay`, as `publishWireRows` calls it. */
export type CreateRelay = (options: {
  pool: pg.Pool
  amqpUrl: string
  exchange: string
  service: string
  retentionIntervalMs: number
}) => { start(): Promise<void>; stop(): Promise<void> }

/**
 * Inserts `WIRE_ROWS` into `pool`'s outbox, has a relay made by `createRelay` publish them to an
 * exchange of their own, and returns what reached the broker, in publish order (see `rawTap`).
 */
export async function publishWireRows(createRelay: CreateRelay, pool: pg.Pool): Promise<WireMessage[]> {
  const exchange = uniqueName('wire_relay')
  const tap = await rawTap(exchange)
  try {
    await insertWireRows(pool)
    const relay = createRelay({ pool, amqpUrl: AMQP_URL, exchange, service: 'wire', retentionIntervalMs: 0 })
    await relay.start()
    const published = await tap.take(WIRE_ROWS.length)
    await relay.stop()
    return published
  } finally {
    await tap.close()
  }
}
