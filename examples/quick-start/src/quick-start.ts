import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import pg from 'pg'
import { z } from 'zod'
import { createMessaging, enqueue, firstEvent, type HandlerDefinition } from '@saga/messaging'

// 1. A contract: the event's versioned type, its routing key, and its payload's schema (zod 4 or
//    any other Standard Schema).
const OrderPlaced = {
  type: 'order.placed.v1',
  routingKey: 'order.placed',
  schema: z.object({ orderId: z.uuid(), total: z.number().int().nonnegative() }),
}
type OrderPlaced = z.infer<typeof OrderPlaced.schema>

// 2. The tables: messaging's two (the SQL ships with the package) and the example's own.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const messagingSql = createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql')
await pool.query(await readFile(messagingSql, 'utf8'))
await pool.query('CREATE TABLE orders (id uuid PRIMARY KEY, total integer NOT NULL)')
await pool.query('CREATE TABLE invoices (order_id uuid PRIMARY KEY, total integer NOT NULL)')

// 3. A handler: its own queue; its writes commit with the inbox row, so a redelivery changes nothing.
const invoiceWhenOrderPlaced: HandlerDefinition<pg.PoolClient, OrderPlaced> = {
  name: 'invoice-when-order-placed',
  message: OrderPlaced,
  async handle(message, tx) {
    const { orderId, total } = message.payload
    await tx.query('INSERT INTO invoices (order_id, total) VALUES ($1, $2)', [orderId, total])
  },
}

// 4. Messaging for this service: the relay, the consumer, their topology, health and metrics.
//    `exchange` and `queuePrefix` name what it declares on the broker; the defaults (exchange
//    `events`, queues `<service>.<handler>`) join whatever a shared broker already has there.
const messaging = createMessaging({
  service: 'shop',
  pool,
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  exchange: 'shop-quick-start.events',
  queuePrefix: 'shop-quick-start',
  handlers: [invoiceWhenOrderPlaced],
})
await messaging.start()

// 5. A business write and its event in one transaction: both commit, or neither does.
const orderId = randomUUID()
const handled = messaging.signals.waitFor('handled', (s) => s.correlationId === orderId, 10_000)
const eventId = await messaging.transaction(async (tx) => {
  await tx.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [orderId, 4200])
  const payload = { orderId, total: 4200 }
  return enqueue(tx, firstEvent(OrderPlaced, { aggregateId: orderId, payload, occurredAt: new Date() }))
})
await handled
console.log(`order ${orderId} placed; its invoice written by the handler`)

// 6. At least once: publish the same event again, as the relay does after a crash between the
//    broker's confirm and marking the row (due now: the relay would first wait out the row's hold).
//    The inbox recognises it; the invoice is not written twice.
const duplicate = messaging.signals.waitFor('duplicate', (s) => s.id === eventId, 10_000)
await pool.query('UPDATE outbox_message SET published_at = NULL, available_at = now() WHERE id = $1', [
  eventId,
])
await duplicate
const { rows } = await pool.query('SELECT count(*)::int AS n FROM invoices WHERE order_id = $1', [orderId])
console.log(`delivered twice, handled once: ${rows[0].n} invoice`)

await messaging.stop()
await pool.end()
