import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import { OrderCancelled, OrderConfirmed, OrderCreated, ShipmentCreated } from '@saga/contracts'
import * as messaging from '@saga/messaging'
import { useAppRun, whenReady } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { orderBody } from './support/orders.js'

const messagingSql = createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql')

// The whole order app (migrations on start, relay, consumers, routes) on a per-run database and
// per-run broker names; a bare messaging instance stands in for the shipment service.
const run = useAppRun({
  service: 'order',
  tap: ['order.#'],
  // A short sleep cap, so a deadline moved into the past behind the scheduler's back fires soon.
  boot: (env) =>
    whenReady(buildApp(loadConfig(env), { fastify: { logger: false }, deadlines: { maxSleepMs: 500 } })),
  upstream: { messaging, messagingSql },
})

describe('the order app', () => {
  it('when an order is placed and its shipment is created, then OrderCreated and OrderConfirmed go out and GET shows the chain', async () => {
    const { app, tap, upstream } = run()
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

  it('when a PENDING order passes its deadline and another is cancelled by its customer, then both OrderCancelled go out and /metrics counts them by cause', async () => {
    const { app, tap, db } = run()
    const place = async () =>
      (await app.inject({ method: 'POST', url: '/orders', payload: orderBody() })).json<{ id: string }>().id
    const expired = await place()
    const asked = await place()
    await db.pool.query(`UPDATE orders SET deadline_at = now() WHERE id = $1`, [expired])

    expect((await app.inject({ method: 'POST', url: `/orders/${asked}/cancel` })).statusCode).toBe(200)

    const cancelledOf = (orderId: string) =>
      tap.waitFor(
        (m) => m.routingKey === OrderCancelled.routingKey && m.properties.correlationId === orderId,
        15_000,
        `order.cancelled of ${orderId}`,
      )
    expect(
      OrderCancelled.schema.parse(((await cancelledOf(expired)).body as { data: unknown }).data),
    ).toMatchObject({
      reason: 'deadline_exceeded',
      failedStep: 'payment',
    })
    expect(
      OrderCancelled.schema.parse(((await cancelledOf(asked)).body as { data: unknown }).data),
    ).toMatchObject({
      reason: 'customer_requested',
    })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(
      /^saga_order_cancellations_total\{cause="deadline_exceeded",saga_service="order"\} 1$/m,
    )
    expect(metrics).toMatch(
      /^saga_order_cancellations_total\{cause="customer_requested",saga_service="order"\} 1$/m,
    )
    expect(metrics).toMatch(/^saga_order_cancellations_total\{cause="payment",saga_service="order"\} 0$/m)
    expect(metrics).toMatch(/^saga_order_deadlines_fired_total\{saga_service="order"\} 1$/m)
    expect(metrics).toContain('# HELP saga_order_cancellations_total ')
  })
})
