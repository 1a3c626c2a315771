import { randomUUID } from 'node:crypto'
import { OrderCreatedV2, StockReservationFailed } from '@saga/contracts'
import { useRouteApp, useServiceTestDatabase } from '@saga/service-kit/testing'
import { describe, expect, it } from 'vitest'
import { processPaymentWhenOrderCreated } from '../src/reactions/process-payment-when-order-created.js'
import { refundPaymentWhenStockReservationFailed } from '../src/reactions/refund-payment-when-stock-reservation-failed.js'
import { paymentRoutes } from '../src/routes/payments.js'
import { database } from '../src/plugins/db.js'
import { consumed, deliver, memoryLogger } from '@saga/messaging/testing'
import { orderCreated } from './support/events.js'

const db = useServiceTestDatabase(database, 'payment_routes')
const app = useRouteApp('payment', (app) => app.register(paymentRoutes, { db: db.prisma }))
const deps = { logger: memoryLogger(), clock: () => new Date() }

describe('GET /payments?orderId=', () => {
  it('when an order was captured and refunded, then the capture and its refund are shown in minor units', async () => {
    const order = orderCreated('tok_visa')
    const { orderId } = order
    await deliver(
      db.pool,
      processPaymentWhenOrderCreated(deps),
      consumed(OrderCreatedV2, order, { correlationId: orderId }),
    )
    const failure = consumed(
      StockReservationFailed,
      {
        orderId,
        customerId: order.customerId,
        reason: 'out_of_stock',
        unavailable: [],
        failedAt: new Date().toISOString(),
      },
      { correlationId: orderId },
    )
    await deliver(db.pool, refundPaymentWhenStockReservationFailed(deps), failure)

    const response = await app.inject({ method: 'GET', url: `/payments?orderId=${orderId}` })

    expect(response.statusCode).toBe(200)
    const { items } = response.json<{ items: { refunds: unknown[] }[] }>()
    expect(items).toHaveLength(1)
    // The same order asked for in upper case: PostgreSQL reads a UUID in either case.
    const upper = await app.inject({ method: 'GET', url: `/payments?orderId=${orderId.toUpperCase()}` })
    expect(upper.json()).toEqual(response.json())
    expect(items[0]).toMatchObject({
      orderId,
      status: 'CAPTURED',
      amount: 4499,
      currency: 'EUR',
      paymentMethod: 'tok_visa',
    })
    expect(items[0]?.refunds).toEqual([
      expect.objectContaining({ amount: 4499, currency: 'EUR', reason: 'out_of_stock' }),
    ])
  })

  it('when the order is unknown here, then the list is empty', async () => {
    const response = await app.inject({ method: 'GET', url: `/payments?orderId=${randomUUID()}` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ items: [] })
  })

  it.each([
    'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '00000000-0000-0000-0000-000000000000',
  ])('when orderId is %s (a UUID in any case), then 200 with an empty list', async (orderId) => {
    const response = await app.inject({ method: 'GET', url: `/payments?orderId=${orderId}` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ items: [] })
  })

  it('when orderId is given twice, then 400 says it is repeated', async () => {
    const response = await app.inject({
      method: 'GET',
      url: `/payments?orderId=${randomUUID()}&orderId=${randomUUID()}`,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({
      message: 'The query parameter orderId is given 2 times; give it once',
      details: [{ path: 'querystring.orderId', issue: 'is repeated (2 values)' }],
    })
  })

  it.each([
    ['', 'querystring.orderId'],
    ['orderId=nope', 'querystring.orderId'],
    [`orderId=${randomUUID()}&extra=1`, 'querystring.extra'],
  ])('when the query is "%s", then 400 names %s', async (query, path) => {
    const response = await app.inject({ method: 'GET', url: `/payments?${query}` })
    expect(response.statusCode).toBe(400)
    expect(response.json<{ details: { path: string }[] }>().details.map((d) => d.path)).toContain(path)
  })

  it('when the OpenAPI document is fetched, then GET /payments with its success and error responses is in it', async () => {
    const document = (await app.inject({ method: 'GET', url: '/documentation/json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }>()
    expect(Object.keys(document.paths['/payments']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '500',
      '503',
    ])
  })
})
