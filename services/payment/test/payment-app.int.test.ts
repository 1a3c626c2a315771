import { createRequire } from 'node:module'
import {
  OrderCreatedV1,
  OrderCreatedV2,
  PaymentProcessed,
  PaymentRefunded,
  StockReservationFailed,
} from '@saga/contracts'
import * as messaging from '@saga/messaging'
import { useAppRun, whenReady } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { orderCreated, orderCreatedV1 } from './support/events.js'

// The whole payment app (migrations on start, relay, consumers, routes) on a per-run database and
// per-run broker names; a bare messaging instance stands in for the order and inventory services.
const run = useAppRun({
  service: 'payment',
  tap: ['payment.#'],
  boot: (env) => whenReady(buildApp(loadConfig(env), { fastify: { logger: false } })),
  upstream: {
    messaging,
    messagingSql: createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql'),
  },
})

describe('the payment app', () => {
  it('when an order is created and its stock then fails, then the capture goes out, is refunded, and GET shows both', async () => {
    const { app, tap, upstream } = run()
    // Announced with v1, as an order service on an earlier build does: upcast to v2 at the inbox.
    const order = orderCreatedV1('tok_visa')
    const { orderId } = order
    const common = { aggregateId: orderId, correlationId: orderId }

    await upstream.publish({
      type: OrderCreatedV1.type,
      routingKey: OrderCreatedV1.routingKey,
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

  it.each([
    ['', 'is required'],
    ['?orderId=nope', 'must be a UUID: 32 hexadecimal digits as 8-4-4-4-12'],
  ])('when GET /payments%s, then 400 says the orderId %s', async (query, issue) => {
    const res = await run().app.inject({ method: 'GET', url: `/payments${query}` })
    expect(res.statusCode).toBe(400)
    expect(res.json<{ details: unknown[] }>().details).toEqual([{ path: 'querystring.orderId', issue }])
  })

  it('when the OpenAPI document is read, then it describes GET /payments', async () => {
    const res = await run().app.inject({ method: 'GET', url: '/documentation/json' })
    expect(Object.keys(res.json<{ paths: Record<string, unknown> }>().paths)).toContain('/payments')
  })
})

describe('the payment app and the versions of OrderCreated', () => {
  it('when an order is announced with order.created.v2, then its total is captured once', async () => {
    const { tap, upstream } = run()
    const order = orderCreated('tok_visa')
    const { orderId } = order
    await upstream.publish({
      type: OrderCreatedV2.type,
      routingKey: OrderCreatedV2.routingKey,
      payload: order,
      aggregateId: orderId,
      correlationId: orderId,
    })
    const processed = await tap.waitFor(
      (m) => m.correlationId === orderId && m.routingKey === PaymentProcessed.routingKey,
      15_000,
    )
    expect(PaymentProcessed.schema.parse((processed.body as { data: unknown }).data)).toMatchObject({
      orderId,
      amount: 4499,
      currency: 'EUR',
    })
  })
})
