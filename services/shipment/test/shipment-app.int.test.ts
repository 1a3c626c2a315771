import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { ShipmentCreated, StockReserved } from '@saga/contracts'
import * as messaging from '@saga/messaging'
import { useAppRun, whenReady } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

// The whole shipment app on a per-run database and per-run broker names; a bare messaging
// instance stands in for inventory upstream. Each test boots the app itself (`start`).
const run = useAppRun({
  service: 'shipment',
  tap: ['shipment.#'],
  upstream: {
    messaging,
    messagingSql: createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql'),
  },
})

const start = (carrierAccount: string) =>
  whenReady(
    buildApp(loadConfig(run().env({ CARRIER_ACCOUNT: carrierAccount })), { fastify: { logger: false } }),
  )

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
    const { tap, upstream } = run()
    const orderId = randomUUID()
    const unconfigured = await start('')
    try {
      const retrying = unconfigured.messaging.signals.waitFor(
        'retrying',
        (s) => s.handler === 'create-shipment-when-stock-reserved',
        15_000,
      )
      await upstream.publish(stockReserved(orderId))
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
