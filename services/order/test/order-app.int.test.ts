import { randomUUID } from 'node:crypto'
import { OrderConfirmed, OrderCreated, ShipmentCreated } from '@saga/contracts'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  uniqueName,
  type TapQueue,
  type TestDatabase,
} from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { orderBody } from './support/orders.js'
import { startUpstream, type Upstream } from './support/upstream.js'

// The whole order app (migrations on start, relay, consumers, routes) on a per-run database and
// per-run broker names; a bare messaging instance stands in for the shipment service.
let db: TestDatabase
let app: Awaited<ReturnType<typeof buildApp>>
let upstream: Upstream
let tap: TapQueue
const exchange = uniqueName('order_app_events')
const queuePrefix = uniqueName('order_app')

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'order_app' })
  tap = await tapQueue(AMQP_URL, exchange, ['order.#'])
  const config = loadConfig({
    DATABASE_URL: db.url,
    AMQP_URL,
    AMQP_EXCHANGE: exchange,
    AMQP_QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'silent',
  })
  app = await buildApp(config, { fastify: { logger: false } })
  await app.ready()
  upstream = await startUpstream(exchange, 'order_upstream')
})

afterAll(async () => {
  await upstream?.close()
  await app?.close()
  await tap?.delete()
  await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
  await db?.drop()
})

describe('the order app', () => {
  it('when an order is placed and its shipment is created, then OrderCreated and OrderConfirmed go out and GET shows the chain', async () => {
    const response = await app.inject({ method: 'POST', url: '/orders', payload: orderBody() })
    expect(response.statusCode).toBe(201)
    const { id: orderId } = response.json<{ id: string }>()

    const [created] = await tap.waitForCount(1, 15_000)
    expect(created).toMatchObject({ routingKey: OrderCreated.routingKey })
    expect(created?.properties).toMatchObject({ correlationId: orderId, type: OrderCreated.type })

    await upstream.publish({
      type: ShipmentCreated.type,
      routingKey: ShipmentCreated.routingKey,
      aggregateId: orderId,
      correlationId: orderId,
      payload: {
        orderId,
        shipmentId: randomUUID(),
        carrier: 'demo-carrier',
        trackingNumber: 'DC-1',
        createdAt: new Date().toISOString(),
      },
    })
    const messages = await tap.waitForCount(2, 15_000)
    expect(messages.map((m) => m.routingKey)).toEqual([OrderCreated.routingKey, OrderConfirmed.routingKey])

    const order = (await app.inject({ method: 'GET', url: `/orders/${orderId}` })).json<{
      status: string
      events: { type: string; source: string }[]
    }>()
    expect(order.status).toBe('CONFIRMED')
    expect(order.events.map((e) => `${e.source}:${e.type}`)).toEqual([
      'order:order.created.v1',
      'upstream:shipment.created.v1',
      'order:order.confirmed.v1',
    ])
  })
})
