import { createRequire } from 'node:module'
import {
  OrderCreatedV1,
  OrderCreatedV2,
  upcastOrderCreatedV1toV2,
  type OrderCreatedV1 as V1,
} from '@saga/contracts'
import * as messaging from '@saga/messaging'
import { outboxOf } from '@saga/messaging/testing'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { useAppRun, whenReady } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { OrderCreatedVersion } from '../src/domain/order.js'
import { database } from '../src/plugins/db.js'
import type { CreateOrderBody } from '../src/schemas.js'
import { useOrderRouteApp } from './support/app.js'
import { orderBody } from './support/orders.js'

const messagingSql = createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql')

/**
 * The order.created.v1 payload exactly as the order service wrote it before v2 existed: the same
 * keys in the same order (orderId, customerId, currency, lines, totalAmount, shippingAddress,
 * paymentMethod, createdAt), lines and address as the request body has them.
 */
const v1AsBefore = (orderId: string, body: CreateOrderBody, createdAt: string): V1 => ({
  orderId,
  customerId: body.customerId,
  currency: body.currency,
  lines: body.items,
  totalAmount: 4499,
  shippingAddress: body.shippingAddress,
  paymentMethod: body.paymentMethod,
  createdAt,
})

interface PlacedOrder {
  id: string
  createdAt: string
  currency: string
  total: number
  events: { type: string; messageId: string }[]
}

describe.each([1, 2] as const)(
  'POST /orders with ORDER_CREATED_VERSION=%i',
  (version: OrderCreatedVersion) => {
    const db = useServiceTestDatabase(database, `order_created_v${version}`)
    const app = useOrderRouteApp(db, { orderCreatedVersion: version })
    const contract = version === 1 ? OrderCreatedV1 : OrderCreatedV2

    it(`when an order is placed, then its outbox row and first timeline entry are ${contract.type} with its payload`, async () => {
      const body = orderBody()
      const response = await app.inject({ method: 'POST', url: '/orders', payload: body })
      expect(response.statusCode).toBe(201)
      const order = response.json<PlacedOrder>()
      expect(order).toMatchObject({ currency: 'EUR', total: 4499 })
      expect(order.events.map((e) => e.type)).toEqual([contract.type])

      const v1 = v1AsBefore(order.id, body, order.createdAt)
      const expected = version === 1 ? v1 : upcastOrderCreatedV1toV2(v1)
      const messageId = order.events[0]?.messageId
      const [row, ...rest] = await outboxOf(db.pool, order.id)
      expect(rest).toEqual([])
      expect(row).toMatchObject({ type: contract.type, routing_key: 'order.created' })
      expect(row?.headers).toMatchObject({ correlationId: order.id, dataschema: contract.dataschema })
      expect(contract.schema.parse(row?.payload)).toEqual(expected)
      // The stored text, compared in the database: the very jsonb a build before v2 wrote, for v1.
      const { rows } = await db.pool.query<{ same: boolean }>(
        `SELECT payload::text = $2::jsonb::text AS same FROM outbox_message WHERE id = $1`,
        [messageId, JSON.stringify(expected)],
      )
      expect(rows[0]?.same).toBe(true)

      const timeline = await db.pool.query<{ type: string; data: unknown; message_id: string }>(
        `SELECT type, data, message_id FROM order_events WHERE order_id = $1`,
        [order.id],
      )
      expect(timeline.rows).toEqual([{ type: contract.type, data: expected, message_id: messageId }])
      const stored = await db.prisma.order.findUniqueOrThrow({ where: { id: order.id } })
      expect(stored).toMatchObject({ currency: 'EUR', totalAmount: 4499n, status: 'PENDING' })
      const got = (await app.inject({ method: 'GET', url: `/orders/${order.id}` })).json<
        PlacedOrder & { waitingFor: string }
      >()
      expect(got).toMatchObject({ total: 4499, currency: 'EUR', waitingFor: 'payment' })
      expect(got.events.map((e) => e.type)).toEqual([contract.type])
    })
  },
)

/** Publishes through the whole app (relay, publisher confirms) with ORDER_CREATED_VERSION=`version`. */
const appRun = (version: string) =>
  useAppRun({
    service: 'order',
    tap: ['order.#'],
    boot: (env) =>
      whenReady(
        buildApp(loadConfig({ ...env, ORDER_CREATED_VERSION: version }), { fastify: { logger: false } }),
      ),
    upstream: { messaging, messagingSql },
  })

interface Envelope {
  type: string
  dataschema: string
  data: unknown
}

describe('the order app publishing order.created', () => {
  describe('with ORDER_CREATED_VERSION=2', () => {
    const run = appRun('2')

    it('when an order is placed, then order.created.v2 goes out under routing key order.created with the v2 payload', async () => {
      const { app, tap } = run()
      const body = orderBody()
      const order = (await app.inject({ method: 'POST', url: '/orders', payload: body })).json<PlacedOrder>()
      const published = await tap.waitFor((m) => m.correlationId === order.id, 15_000, 'the OrderCreated')
      expect(published).toMatchObject({ routingKey: 'order.created', type: 'order.created.v2' })
      const envelope = published.body as Envelope
      expect(envelope).toMatchObject({
        type: 'order.created.v2',
        dataschema: 'urn:saga:event:order.created.v2',
      })
      const expected = upcastOrderCreatedV1toV2(v1AsBefore(order.id, body, order.createdAt))
      expect(OrderCreatedV2.schema.parse(envelope.data)).toEqual(expected)
      expect(envelope.data).toEqual(expected)
    })
  })

  describe('with ORDER_CREATED_VERSION=1', () => {
    const run = appRun('1')

    it('when an order is placed, then order.created.v1 goes out with the payload as a build before v2 wrote it, key for key', async () => {
      const { app, tap } = run()
      const body = orderBody()
      const order = (await app.inject({ method: 'POST', url: '/orders', payload: body })).json<PlacedOrder>()
      const published = await tap.waitFor((m) => m.correlationId === order.id, 15_000, 'the OrderCreated')
      expect(published).toMatchObject({ routingKey: 'order.created', type: 'order.created.v1' })
      const envelope = published.body as Envelope
      expect(envelope).toMatchObject({
        type: 'order.created.v1',
        dataschema: 'urn:saga:event:order.created.v1',
      })
      expect(envelope.data).toEqual(v1AsBefore(order.id, body, order.createdAt))
      expect(JSON.stringify(envelope.data)).toBe(JSON.stringify(v1AsBefore(order.id, body, order.createdAt)))
    })
  })
})
