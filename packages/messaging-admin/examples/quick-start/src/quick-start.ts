import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import Fastify from 'fastify'
import pg from 'pg'
import { z } from 'zod'
import {
  createMessaging,
  enqueue,
  firstEvent,
  type HandlerDefinition,
  type MessagingOptions,
} from '@saga/messaging'
import { createMessagingAdmin } from '@saga/messaging-admin'
import { messagingAdminPlugin } from '@saga/messaging-admin/fastify'

// 1. The tables: messaging's two, then the admin's audit table (both files ship with the packages).
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
const resolve = createRequire(import.meta.url).resolve
for (const sql of ['@saga/messaging/sql/messaging.sql', '@saga/messaging-admin/sql/messaging-admin.sql'])
  await pool.query(await readFile(resolve(sql), 'utf8'))

// 2. A handler that fails while the carrier it calls is down: after one attempt, a dead letter.
const OrderPlaced = {
  type: 'order.placed.v1',
  routingKey: 'order.placed',
  schema: z.object({ orderId: z.uuid() }),
}
let carrierUp = false
const shipWhenOrderPlaced: HandlerDefinition<pg.PoolClient, z.infer<typeof OrderPlaced.schema>> = {
  name: 'ship-when-order-placed',
  message: OrderPlaced,
  handle() {
    if (!carrierUp) throw new Error('the carrier is down')
    return Promise.resolve()
  },
}

// 3. One options object for messaging and its admin, so the admin knows the same queues. The
//    admin opens a broker connection of its own on first use; close it when the service stops.
const options: MessagingOptions = {
  service: 'shop',
  pool,
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  handlers: [shipWhenOrderPlaced],
  consumer: { maxAttempts: 1 },
}
const messaging = createMessaging(options)
const admin = createMessagingAdmin(options)
await messaging.start()

// 4. The admin routes under /admin/messaging. Reads are open; writes need the bearer token (at
//    least 16 characters; without one every write is refused with 403).
const token = process.env.ADMIN_TOKEN ?? 'change-me-to-a-long-random-token'
const app = Fastify()
await app.register(messagingAdminPlugin, { admin, token })

// 5. An order whose event the handler fails on.
const orderId = randomUUID()
const deadLettered = messaging.signals.waitFor(
  'deadLettered',
  (s) => s.handler === 'ship-when-order-placed',
  10_000,
)
const eventId = await messaging.transaction((tx) =>
  enqueue(
    tx,
    firstEvent(OrderPlaced, { aggregateId: orderId, payload: { orderId }, occurredAt: new Date() }),
  ),
)
await deadLettered
const browsed = await app.inject({ url: `/admin/messaging/dead-letters?aggregateId=${orderId}` })
const [queue] = browsed.json<{ queues: { queue: string; messages: { messageId: string }[] }[] }>().queues
console.log(`order ${orderId}: ${queue?.messages.length} dead letter in ${queue?.queue}`)

// 6. The carrier is back: an operator requeues the dead letter, and the handler takes it.
carrierUp = true
const handled = messaging.signals.waitFor('handled', (s) => s.id === eventId, 10_000)
const requeued = await app.inject({
  method: 'POST',
  url: '/admin/messaging/dead-letters/requeue',
  headers: { authorization: `Bearer ${token}`, 'x-admin-actor': 'ada@ops' },
  payload: { queue: queue?.queue, messageIds: [eventId] },
})
await handled
console.log(
  `requeue: ${requeued.json<{ results: { outcome: string }[] }>().results[0]?.outcome}, then handled`,
)

// 7. Every write that changed something is recorded: who, what, on which ids.
const audit = await app.inject({ url: '/admin/messaging/actions?limit=1' })
const [action] = audit.json<{ actions: { actor: string; action: string; ids: string[] }[] }>().actions
console.log(`recorded: ${action?.actor} ${action?.action} ${action?.ids.join(',')}`)

await app.close()
await admin.close()
await messaging.stop()
await pool.end()
