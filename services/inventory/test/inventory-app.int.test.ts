import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { PaymentProcessed, ShipmentFailed, StockReleased, StockReserved } from '@saga/contracts'
import * as messaging from '@saga/messaging'
import { useAppRun, whenReady } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { CATALOGUE } from '../src/catalogue.js'
import { loadConfig } from '../src/config.js'

// The whole inventory app (migrations on start, seeding, relay, consumers, routes) on a per-run
// database and per-run broker names; a bare messaging instance stands in for the payment and
// shipment services upstream.
const run = useAppRun({
  service: 'inventory',
  tap: ['stock.#'],
  boot: (env) =>
    whenReady(buildApp(loadConfig({ ...env, SEED_CATALOGUE: 'true' }), { fastify: { logger: false } })),
  upstream: {
    messaging,
    messagingSql: createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql'),
  },
})

const stock = async (sku: string) =>
  (await run().app.inject({ method: 'GET', url: `/stock/${sku}` })).json<unknown>()

describe('the inventory app', () => {
  it('when started with SEED_CATALOGUE=true, then every catalogue sku is in stock', async () => {
    for (const item of CATALOGUE) {
      expect(await stock(item.sku)).toEqual({ sku: item.sku, available: item.available, reserved: 0 })
    }
  })

  it('when the seed runs again over changed stock, then existing rows are kept', async () => {
    const { app } = run()
    const [first] = CATALOGUE
    if (!first) throw new Error('empty catalogue')
    await app.inject({ method: 'PUT', url: `/stock/${first.sku}`, payload: { available: 1 } })
    const { seedCatalogue } = await import('../src/catalogue.js')

    expect(await seedCatalogue(app.prisma)).toBe(0)
    expect(await stock(first.sku)).toMatchObject({ available: 1 })
    await app.inject({ method: 'PUT', url: `/stock/${first.sku}`, payload: { available: first.available } })
  })

  it('when PaymentProcessed and then ShipmentFailed arrive over the broker, then stock is reserved, then released', async () => {
    const { tap, upstream } = run()
    const orderId = randomUUID()
    const lines = [{ sku: 'MUG-001', quantity: 2, unitPrice: 1200 }]
    const before = (await stock('MUG-001')) as { available: number }

    await upstream.publish({
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

    await upstream.publish({
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
    const res = await run().app.inject({ method: 'GET', url: '/documentation/json' })
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
