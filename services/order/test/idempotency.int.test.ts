import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { useOrderRouteApp } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { orderBody } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_idem')
const app = useOrderRouteApp(db)

const post = (payload: object, key?: string) =>
  app.inject({
    method: 'POST',
    url: '/orders',
    payload,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  })

const ordersOf = (customerId: string) => db.prisma.order.count({ where: { customerId } })
const outboxOf = async (customerId: string) =>
  Number(
    (
      await db.pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM outbox_message WHERE payload->>'customerId' = $1",
        [customerId],
      )
    ).rows[0]?.n,
  )

describe('Idempotency-Key on POST /orders', () => {
  it('when a request is retried with the same key and body, then the first response is returned and no second order is made', async () => {
    const key = randomUUID()
    const body = orderBody()

    const first = await post(body, key)
    const retry = await post(body, key)

    expect(first.statusCode).toBe(201)
    expect(retry.statusCode).toBe(201)
    expect(retry.json()).toEqual(first.json())
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(await ordersOf(body.customerId)).toBe(1)
    expect(await outboxOf(body.customerId)).toBe(1)
  })

  it('when the retry has the same content with keys in another order, then it is the same request', async () => {
    const key = randomUUID()
    const body = orderBody()
    const reordered = {
      paymentMethod: body.paymentMethod,
      shippingAddress: { ...body.shippingAddress },
      items: body.items.map((item) => ({
        unitPrice: item.unitPrice,
        quantity: item.quantity,
        sku: item.sku,
      })),
      currency: body.currency,
      customerId: body.customerId,
    }

    const first = await post(body, key)
    const retry = await post(reordered, key)

    expect(retry.statusCode).toBe(201)
    expect(retry.json<{ id: string }>().id).toBe(first.json<{ id: string }>().id)
    expect(await ordersOf(body.customerId)).toBe(1)
  })

  it('when the same key comes with a different body, then 409 and nothing is written', async () => {
    const key = randomUUID()
    const body = orderBody()
    await post(body, key)

    const other = await post({ ...body, items: [{ sku: 'MUG-01', quantity: 9, unitPrice: 1250 }] }, key)

    expect(other.statusCode).toBe(409)
    expect(other.json<{ details: { path: string }[] }>().details.map((d) => d.path)).toEqual([
      'headers.idempotency-key',
    ])
    expect(await ordersOf(body.customerId)).toBe(1)
    expect(await outboxOf(body.customerId)).toBe(1)
  })

  it('when one key is sent by concurrent requests, then exactly one order exists and every response is that order', async () => {
    const key = randomUUID()
    const body = orderBody()

    const responses = await Promise.all(Array.from({ length: 8 }, () => post(body, key)))

    expect(responses.map((response) => response.statusCode)).toEqual(Array(8).fill(201))
    const ids = new Set(responses.map((response) => response.json<{ id: string }>().id))
    expect(ids.size).toBe(1)
    expect(await ordersOf(body.customerId)).toBe(1)
    expect(await outboxOf(body.customerId)).toBe(1)
    expect(await db.prisma.idempotencyKey.count({ where: { key } })).toBe(1)
  })

  it('when no key is sent, then each request makes its own order', async () => {
    const body = orderBody()

    await post(body)
    await post(body)

    expect(await ordersOf(body.customerId)).toBe(2)
  })

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['not printable ASCII', 'schlüssel'],
  ])(
    'when the key is %s, then 400 names headers.idempotency-key and nothing is written',
    async (_case, key) => {
      const body = orderBody()

      const response = await app.inject({
        method: 'POST',
        url: '/orders',
        payload: body,
        headers: { 'idempotency-key': key },
      })

      expect(response.statusCode).toBe(400)
      expect(response.json<{ details: { path: string }[] }>().details.map((d) => d.path)).toContain(
        'headers.idempotency-key',
      )
      expect(await ordersOf(body.customerId)).toBe(0)
    },
  )

  it('when the stored response predates deadlines, waitingFor and messageId, then the replay is still 201 with deadlineAt and notes null, waitingFor payment and messageId the event id', async () => {
    const key = randomUUID()
    const body = orderBody()
    const first = await post(body, key)
    expect(first.statusCode).toBe(201)
    await db.pool.query(
      `UPDATE idempotency_keys SET response_body = (response_body - 'deadlineAt' - 'waitingFor')
         || jsonb_build_object('events',
              (SELECT jsonb_agg(e - 'note' - 'messageId') FROM jsonb_array_elements(response_body->'events') e))
       WHERE key = $1`,
      [key],
    )

    const replay = await post(body, key)

    expect(replay.statusCode).toBe(201)
    const view = replay.json<{
      id: string
      deadlineAt: string | null
      waitingFor: string | null
      events: { id: string; messageId: string; note: string | null }[]
    }>()
    expect(view.id).toBe(first.json<{ id: string }>().id)
    expect(view.deadlineAt).toBeNull()
    expect(view.waitingFor).toBe('payment')
    expect(view.events.map((e) => e.note)).toEqual([null])
    expect(view.events.map((e) => e.messageId)).toEqual(view.events.map((e) => e.id))
  })
})
