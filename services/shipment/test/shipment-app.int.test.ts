import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { ShipmentCreated, StockReserved } from '@saga/contracts'
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
import { loadConfig } from '../src/config.js'

const MESSAGING_SQL = fileURLToPath(new URL('../../../packages/messaging/sql/messaging.sql', import.meta.url))

// The whole shipment app on a per-run database and per-run broker names; a bare messaging
// instance stands in for inventory upstream.
let db: TestDatabase
let upstreamDb: TestDatabase
let upstream: Messaging<pg.PoolClient>
let tap: TapQueue
const exchange = uniqueName('shipment_app_events')
const queuePrefix = uniqueName('shipment_app')

const start = async (carrierAccount: string) => {
  const config = loadConfig({
    DATABASE_URL: db.url,
    AMQP_URL,
    AMQP_EXCHANGE: exchange,
    AMQP_QUEUE_PREFIX: queuePrefix,
    CARRIER_ACCOUNT: carrierAccount,
    LOG_LEVEL: 'silent',
  })
  const app = await buildApp(config, { fastify: { logger: false } })
  await app.ready()
  return app
}

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'shipment_app' })
  upstreamDb = await createTestDatabase({ prefix: 'shipment_upstream', sqlFiles: [MESSAGING_SQL] })
  tap = await tapQueue(AMQP_URL, exchange, ['shipment.#'])
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
  await tap?.delete()
  await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
  await upstreamDb?.drop()
  await db?.drop()
})

function stockReserved(orderId: string) {
  return {
    type: StockReserved.type,
    routingKey: StockReserved.routingKey,
    aggregateId: orderId,
    correlationId: orderId,
    payload: {
      orderId,
      customerId: randomUUID(),
      lines: [{ sku: 'MUG-001', quantity: 1, unitPrice: 1200 }],
      shippingAddress: { name: 'Ada', line1: 'Main St 1', city: 'Oslo', postalCode: '0150', country: 'NO' },
      reservedAt: new Date().toISOString(),
    },
  }
}

describe('the shipment app', () => {
  it('when CARRIER_ACCOUNT is empty, then it boots, retries the delivery naming the setting, and ships once restarted with it', async () => {
    const orderId = randomUUID()
    const unconfigured = await start('')
    try {
      const retrying = unconfigured.messaging.signals.waitFor(
        'retrying',
        (s) => s.handler === 'create-shipment-when-stock-reserved',
        15_000,
      )
      await upstream.transaction((tx) => enqueue(tx, stockReserved(orderId)).then(() => undefined))
      expect((await retrying).error).toMatch(/CARRIER_ACCOUNT/)
      const live = await unconfigured.inject({ method: 'GET', url: '/health/live' })
      expect(live.statusCode).toBe(200)
      expect(tap.messages).toHaveLength(0)
    } finally {
      await unconfigured.close()
    }

    const configured = await start('demo-carrier')
    try {
      const [created] = await tap.waitForCount(1, 20_000)
      expect(created?.routingKey).toBe(ShipmentCreated.routingKey)
      expect(created?.properties.correlationId).toBe(orderId)
      const list = await configured.inject({ method: 'GET', url: `/shipments?orderId=${orderId}` })
      expect(list.json<{ items: { carrier: string }[] }>().items).toHaveLength(1)
      const openapi = await configured.inject({ method: 'GET', url: '/documentation/json' })
      const paths = openapi.json<{ paths: Record<string, { get?: { responses: object } }> }>().paths
      expect(Object.keys(paths['/shipments']?.get?.responses ?? {}).sort()).toEqual([
        '200',
        '400',
        '500',
        '503',
      ])
    } finally {
      await configured.close()
    }
  })
})
