import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { PaymentProcessed, ShipmentFailed, StockReleased, StockReserved } from '@saga/contracts'
import { createMessaging, enqueue, pgDatabase, type Messaging } from '@saga/messaging'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  uniqueName,
  type TapQueue,
  type TestDatabase,
} from '@saga/testkit'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { CATALOGUE } from '../src/catalogue.js'
import { loadConfig } from '../src/config.js'

const MESSAGING_SQL = fileURLToPath(new URL('../../../packages/messaging/sql/messaging.sql', import.meta.url))

// The whole inventory app (migrations on start, seeding, relay, consumers, routes) on a per-run
// database and per-run broker names; a bare messaging instance stands in for the payment and
// shipment services upstream.
let db: TestDatabase
let upstreamDb: TestDatabase
let upstream: Messaging<pg.PoolClient>
let app: Awaited<ReturnType<typeof buildApp>>
let tap: TapQueue
const exchange = uniqueName('inventory_app_events')
const queuePrefix = uniqueName('inventory_app')

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'inventory_app' })
  upstreamDb = await createTestDatabase({ prefix: 'inventory_upstream', sqlFiles: [MESSAGING_SQL] })
  tap = await tapQueue(AMQP_URL, exchange, ['stock.#'])
  const config = loadConfig({
    DATABASE_URL: db.url,
    AMQP_URL,
    AMQP_EXCHANGE: exchange,
    AMQP_QUEUE_PREFIX: queuePrefix,
    SEED_CATALOGUE: 'true',
    LOG_LEVEL: 'silent',
  })
  app = await buildApp(config, { fastify: { logger: false } })
  await app.ready()
  upstream = createMessaging({
    service: 'upstream',
    database: pgDatabase(upstreamDb.pool),
    pool: upstreamDb.pool,
    amqpUrl: AMQP_URL,
    exchange,
  })
  await upstream.start()
})

afterAll(async () => {
  await upstream?.stop()
  await app?.close()
  await tap?.delete()
  await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
  await upstreamDb?.drop()
  await db?.drop()
})

async function publishUpstream(message: Parameters<typeof enqueue>[1]) {
  await upstream.transaction((tx) => enqueue(tx, message).then(() => undefined))
}

const stock = async (sku: string) =>
  (await app.inject({ method: 'GET', url: `/stock/${sku}` })).json<unknown>()

describe('the inventory app', () => {
  it('when started with SEED_CATALOGUE=true, then every catalogue sku is in stock', async () => {
    for (const item of CATALOGUE) {
      expect(await stock(item.sku)).toEqual({ sku: item.sku, available: item.available, reserved: 0 })
    }
  })

  it('when the seed runs again over changed stock, then existing rows are kept', async () => {
    const [first] = CATALOGUE
    if (!first) throw new Error('empty catalogue')
    await app.inject({ method: 'PUT', url: `/stock/${first.sku}`, payload: { available: 1 } })
    const { seedCatalogue } = await import('../src/catalogue.js')

    expect(await seedCatalogue(app.prisma)).toBe(0)
    expect(await stock(first.sku)).toMatchObject({ available: 1 })
    await app.inject({ method: 'PUT', url: `/stock/${first.sku}`, payload: { available: first.available } })
  })

  it('when PaymentProcessed and then ShipmentFailed arrive over the broker, then stock is reserved, then released', async () => {
    const orderId = randomUUID()
    const lines = [{ sku: 'MUG-001', quantity: 2, unitPrice: 1200 }]
    const before = (await stock('MUG-001')) as { available: number }

    await publishUpstream({
      type: PaymentProcessed.type,
      routingKey: PaymentProcessed.routingKey,
      aggregateId: orderId,
      correlationId: orderId,
      payload: {
        orderId,
        customerId: randomUUID(),
        paymentId: randomUUID(),
        amount: 2400,
        currency: 'EUR',
        lines,
        shippingAddress: {
          name: 'Ada',
          line1: 'Main St 1',
          city: 'Berlin',
          postalCode: '10115',
          country: 'DE',
        },
        processedAt: new Date().toISOString(),
      },
    })
    const [reserved] = await tap.waitForCount(1, 15_000)
    expect(reserved?.routingKey).toBe(StockReserved.routingKey)
    expect(reserved?.properties.correlationId).toBe(orderId)
    expect(await stock('MUG-001')).toEqual({ sku: 'MUG-001', available: before.available - 2, reserved: 2 })

    await publishUpstream({
      type: ShipmentFailed.type,
      routingKey: ShipmentFailed.routingKey,
      aggregateId: orderId,
      correlationId: orderId,
      payload: {
        orderId,
        reason: 'unsupported_country',
        country: 'AQ',
        lines,
        failedAt: new Date().toISOString(),
      },
    })
    const messages = await tap.waitForCount(2, 15_000)
    expect(messages.map((m) => m.routingKey)).toEqual([StockReserved.routingKey, StockReleased.routingKey])
    expect(await stock('MUG-001')).toEqual({ sku: 'MUG-001', available: before.available, reserved: 0 })
  })

  it('when the OpenAPI document is read, then it describes the stock routes with their errors', async () => {
    const res = await app.inject({ method: 'GET', url: '/documentation/json' })
    expect(res.statusCode).toBe(200)
    const paths = res.json<{ paths: Record<string, Record<string, { responses: object }>> }>().paths
    expect(Object.keys(paths['/stock/{sku}']?.put?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '413',
      '415',
      '500',
      '503',
    ])
    expect(Object.keys(paths['/stock/{sku}']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '404',
      '500',
      '503',
    ])
  })
})
