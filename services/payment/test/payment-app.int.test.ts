import { OrderCreated, PaymentProcessed, PaymentRefunded, StockReservationFailed } from '@saga/contracts'
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
import { orderCreated } from './support/events.js'
import { startUpstream, type Upstream } from './support/upstream.js'

// The whole payment app (migrations on start, relay, consumers, routes) on a per-run database and
// per-run broker names; a bare messaging instance stands in for the order and inventory services.
let db: TestDatabase
let app: Awaited<ReturnType<typeof buildApp>>
let upstream: Upstream
let tap: TapQueue
const exchange = uniqueName('payment_app_events')
const queuePrefix = uniqueName('payment_app')

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'payment_app' })
  tap = await tapQueue(AMQP_URL, exchange, ['payment.#'])
  const config = loadConfig({
    DATABASE_URL: db.url,
    AMQP_URL,
    AMQP_EXCHANGE: exchange,
    AMQP_QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'silent',
  })
  app = await buildApp(config, { fastify: { logger: false } })
  await app.ready()
  upstream = await startUpstream(exchange, 'payment_upstream')
})

afterAll(async () => {
  await upstream?.close()
  await app?.close()
  await tap?.delete()
  await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
  await db?.drop()
})

describe('the payment app', () => {
  it('when an order is created and its stock then fails, then the capture goes out, is refunded, and GET shows both', async () => {
    const order = orderCreated('tok_visa')
    const { orderId } = order
    const common = { aggregateId: orderId, correlationId: orderId }

    await upstream.publish({
      type: OrderCreated.type,
      routingKey: OrderCreated.routingKey,
      payload: order,
      ...common,
    })
    const [processed] = await tap.waitForCount(1, 15_000)
    expect(processed).toMatchObject({ routingKey: PaymentProcessed.routingKey })

    await upstream.publish({
      type: StockReservationFailed.type,
      routingKey: StockReservationFailed.routingKey,
      payload: {
        orderId,
        customerId: order.customerId,
        reason: 'out_of_stock',
        unavailable: [{ sku: 'MUG-01', requested: 2, available: 0 }],
        failedAt: new Date().toISOString(),
      },
      ...common,
    })
    const messages = await tap.waitForCount(2, 15_000)
    expect(messages.map((m) => m.routingKey)).toEqual([
      PaymentProcessed.routingKey,
      PaymentRefunded.routingKey,
    ])

    const { items } = (await app.inject({ method: 'GET', url: `/payments?orderId=${orderId}` })).json<{
      items: { status: string; amount: number; refunds: { amount: number }[] }[]
    }>()
    expect(items).toEqual([
      expect.objectContaining({
        status: 'CAPTURED',
        amount: 4499,
        refunds: [expect.objectContaining({ amount: 4499 })],
      }),
    ])
  })

  it('when the OpenAPI document is read, then it describes GET /payments', async () => {
    const res = await app.inject({ method: 'GET', url: '/documentation/json' })
    expect(Object.keys(res.json<{ paths: Record<string, unknown> }>().paths)).toContain('/payments')
  })
})
