import { randomUUID } from 'node:crypto'
import { OrderCreated } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { useOrderRouteApp } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { outboxOf } from '@saga/messaging/testing'
import { orderBody } from './support/orders.js'
import { MAX_PAGE_SIZE } from '../src/schemas.js'

const db = useServiceTestDatabase(database, 'order_routes')
const app = useOrderRouteApp(db)

interface ErrorBody {
  error: string
  message: string
  details: { path: string; issue: string }[]
}

const post = (payload: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/orders', payload: payload as object, headers })

const counts = async () => {
  const { rows } = await db.pool.query<{ orders: string; outbox: string; keys: string }>(
    `SELECT (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM outbox_message) AS outbox,
            (SELECT count(*) FROM idempotency_keys) AS keys`,
  )
  return rows[0]
}

describe('POST /orders', () => {
  it('when the body is valid, then 201 returns the PENDING order with its total, and the order and OrderCreated are stored', async () => {
    const body = orderBody()

    const response = await post(body)

    expect(response.statusCode).toBe(201)
    const order = response.json<{ id: string; status: string; total: number; events: { type: string }[] }>()
    expect(order).toMatchObject({
      status: 'PENDING',
      total: 4499,
      currency: 'EUR',
      customerId: body.customerId,
    })
    expect(order.events.map((event) => event.type)).toEqual(['order.created.v1'])
    expect(response.headers.location).toBe(`/orders/${order.id}`)
    const stored = await db.prisma.order.findUniqueOrThrow({
      where: { id: order.id },
      include: { lines: true },
    })
    expect(stored).toMatchObject({ status: 'PENDING', totalAmount: 4499n, shipCountry: 'PT' })
    expect(stored.lines).toHaveLength(2)
    const outbox = await outboxOf(db.pool, order.id)
    expect(outbox.map((row) => [row.type, row.routing_key])).toEqual([['order.created.v1', 'order.created']])
    expect(OrderCreated.schema.parse(outbox[0]?.payload)).toMatchObject({
      orderId: order.id,
      totalAmount: 4499,
      lines: body.items,
      shippingAddress: body.shippingAddress,
      paymentMethod: 'tok_visa',
    })
    expect(outbox[0]?.headers).toMatchObject({ correlationId: order.id })
  })

  it('when the order is as large as the limits allow, then 201 with the exact total in minor units', async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({
      sku: `BIG-${i}`,
      quantity: 1_000,
      unitPrice: 100_000_000,
    }))

    const response = await post(orderBody({ items, currency: 'JPY' }))

    expect(response.statusCode).toBe(201)
    const { id, total } = response.json<{ id: string; total: number }>()
    expect(total).toBe(10_000_000_000_000)
    expect((await db.prisma.order.findUniqueOrThrow({ where: { id } })).totalAmount).toBe(10_000_000_000_000n)
  })

  const base = orderBody()
  const item = base.items[0]
  const withItem = (patch: object) => ({ ...base, items: [{ ...item, ...patch }] })
  const badBodies: [string, unknown, string][] = [
    ['a required field is missing', { ...base, customerId: undefined }, 'body.customerId'],
    ['an unknown field is present', { ...base, coupon: 'FREE' }, 'body.coupon'],
    ['an item has an unknown field', withItem({ discount: 5 }), 'body.items.0.discount'],
    [
      'the address has an unknown field',
      { ...base, shippingAddress: { ...base.shippingAddress, line9: 'x' } },
      'body.shippingAddress.line9',
    ],
    ['a quantity is a string', withItem({ quantity: '2' }), 'body.items.0.quantity'],
    ['a quantity is zero', withItem({ quantity: 0 }), 'body.items.0.quantity'],
    ['a quantity is negative', withItem({ quantity: -3 }), 'body.items.0.quantity'],
    ['a quantity is fractional', withItem({ quantity: 1.5 }), 'body.items.0.quantity'],
    ['a quantity is absurd', withItem({ quantity: 1_000_000 }), 'body.items.0.quantity'],
    ['a price is zero', withItem({ unitPrice: 0 }), 'body.items.0.unitPrice'],
    ['a price is negative', withItem({ unitPrice: -100 }), 'body.items.0.unitPrice'],
    ['a price is not in minor units', withItem({ unitPrice: 12.5 }), 'body.items.0.unitPrice'],
    ['a price is absurd', withItem({ unitPrice: 1e12 }), 'body.items.0.unitPrice'],
    ['the currency is unknown', { ...base, currency: 'XYZ' }, 'body.currency'],
    ['the currency is lower case', { ...base, currency: 'eur' }, 'body.currency'],
    [
      'the country is unknown',
      { ...base, shippingAddress: { ...base.shippingAddress, country: 'ZZ' } },
      'body.shippingAddress.country',
    ],
    ['the item list is empty', { ...base, items: [] }, 'body.items'],
    ['there are too many lines', { ...base, items: Array.from({ length: 101 }, () => item) }, 'body.items'],
    ['the customer id is not a uuid', { ...base, customerId: '12345' }, 'body.customerId'],
    [
      'a string holds a NUL byte',
      { ...base, shippingAddress: { ...base.shippingAddress, name: 'Ana\u0000' } },
      'body.shippingAddress.name',
    ],
    ['a sku holds a NUL byte', withItem({ sku: 'MUG\u000001' }), 'body.items.0.sku'],
    [
      'a string is too long',
      { ...base, shippingAddress: { ...base.shippingAddress, city: 'x'.repeat(101) } },
      'body.shippingAddress.city',
    ],
    [
      'the payment method is not a token',
      { ...base, paymentMethod: '4242424242424242' },
      'body.paymentMethod',
    ],
    ['the body is not an object', [base], 'body'],
  ]

  it.each(badBodies)('when %s, then 400 names %s and nothing is written', async (_case, payload, path) => {
    const before = await counts()

    const response = await post(payload)

    expect(response.statusCode).toBe(400)
    const body = response.json<ErrorBody>()
    expect(body.error).toBe('Bad Request')
    expect(body.details.map((detail) => detail.path)).toContain(path)
    expect(body.details.every((detail) => detail.issue.length > 0)).toBe(true)
    expect(await counts()).toEqual(before)
  })

  it('when two unknown fields are present, then each is named by its own path', async () => {
    const response = await post({ ...base, coupon: 'FREE', note: 'x' })
    expect(response.json<ErrorBody>().details).toEqual([
      { path: 'body.coupon', issue: 'is not an allowed field' },
      { path: 'body.note', issue: 'is not an allowed field' },
    ])
  })

  it('when a string holds an unpaired surrogate escape, then 400 names it (not a 500 from jsonb) and nothing is written', async () => {
    const before = await counts()
    const raw = JSON.stringify({ ...base, shippingAddress: { ...base.shippingAddress, name: 'XX' } })
    const response = await app.inject({
      method: 'POST',
      url: '/orders',
      payload: raw.replace('"XX"', '"Ana \\ud800"'),
      headers: { 'content-type': 'application/json' },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>().details.map((detail) => detail.path)).toEqual([
      'body.shippingAddress.name',
    ])
    expect(await counts()).toEqual(before)
  })

  it('when the JSON is malformed, then 400 and nothing is written', async () => {
    const before = await counts()
    const response = await app.inject({
      method: 'POST',
      url: '/orders',
      payload: '{"customerId": ',
      headers: { 'content-type': 'application/json' },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>().error).toBe('Bad Request')
    expect(await counts()).toEqual(before)
  })

  it('when the body is larger than the limit, then 413 and nothing is written', async () => {
    const before = await counts()
    const response = await post({ ...base, padding: 'x'.repeat(70 * 1024) })
    expect(response.statusCode).toBe(413)
    expect(response.json<ErrorBody>().error).toBe('Payload Too Large')
    expect(await counts()).toEqual(before)
  })
})

describe('GET /orders/:id', () => {
  it('when the order exists, then 200 shows status, total, items, address and its events with times', async () => {
    const created = (await post(orderBody())).json<{ id: string }>()

    const response = await app.inject({ method: 'GET', url: `/orders/${created.id}` })

    expect(response.statusCode).toBe(200)
    const order = response.json<{ events: { type: string; occurredAt: string; recordedAt: string }[] }>()
    expect(order).toMatchObject({ id: created.id, status: 'PENDING', total: 4499, cancellationReason: null })
    expect(order.events).toHaveLength(1)
    expect(new Date(order.events[0]?.occurredAt ?? '').getTime()).toBeGreaterThan(0)
  })

  it('when an order was just created, then GET returns exactly what the 201 said', async () => {
    const created = await post(orderBody())

    const fetched = await app.inject({ method: 'GET', url: `/orders/${created.json<{ id: string }>().id}` })

    expect(fetched.json()).toEqual(created.json())
  })

  it('when the id is unknown, then 404', async () => {
    const response = await app.inject({ method: 'GET', url: `/orders/${randomUUID()}` })
    expect(response.statusCode).toBe(404)
    expect(response.json<ErrorBody>().error).toBe('Not Found')
  })

  it.each([
    ['the max UUID in upper case', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'],
    ['the max UUID in lower case', 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ['a version-0 UUID PostgreSQL reads', 'A0EEBC99-9C0B-0EF8-0B6D-6BB9BD380A11'],
  ])('when the id is %s, then it is looked up as PostgreSQL reads it: 404', async (_what, id) => {
    const response = await app.inject({ method: 'GET', url: `/orders/${id}` })
    expect(response.statusCode).toBe(404)
  })

  it('when an existing order is asked for by its id in upper case, then 200', async () => {
    const created = (await post(orderBody())).json<{ id: string }>()
    const response = await app.inject({ method: 'GET', url: `/orders/${created.id.toUpperCase()}` })
    expect(response.statusCode).toBe(200)
    expect(response.json<{ id: string }>().id).toBe(created.id)
  })

  it('when the id is not a uuid, then 400 names params.id', async () => {
    const response = await app.inject({ method: 'GET', url: '/orders/not-a-uuid' })
    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>().details.map((detail) => detail.path)).toEqual(['params.id'])
  })
})

describe('POST /orders with ids in any case', () => {
  it('when customerId is the max UUID in upper case, then 201 and it is stored as PostgreSQL reads it', async () => {
    const response = await post(orderBody({ customerId: 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF' }))
    expect(response.statusCode).toBe(201)
    const { rows } = await db.pool.query<{ customer_id: string }>(
      'SELECT customer_id FROM orders WHERE id = $1',
      [response.json<{ id: string }>().id],
    )
    expect(rows[0]?.customer_id).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff')
  })
})

describe('GET /orders', () => {
  it('when paging with a limit, then pages follow nextCursor newest first without repeats', async () => {
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await post(orderBody())).json<{ id: string }>().id)
    await db.prisma.order.update({
      where: { id: ids[0] },
      data: {
        status: 'CANCELLED',
        cancellationReason: 'card_declined',
        failedStep: 'payment',
        cancelledAt: new Date(),
      },
    })

    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url: string = `/orders?status=PENDING&limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode).toBe(200)
      const page = response.json<{ items: { id: string; status: string }[]; nextCursor: string | null }>()
      expect(page.items.length).toBeLessThanOrEqual(2)
      expect(page.items.every((order) => order.status === 'PENDING')).toBe(true)
      seen.push(...page.items.map((order) => order.id))
      cursor = page.nextCursor
    } while (cursor)

    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).not.toContain(ids[0])
    const newestFirst = ids.slice(1).reverse()
    expect(seen.filter((id) => newestFirst.includes(id))).toEqual(newestFirst)
  })

  it.each([
    ['status=SHIPPED', 'querystring.status'],
    ['limit=0', 'querystring.limit'],
    ['limit=101', 'querystring.limit'],
    ['cursor=%00', 'querystring.cursor'],
    ['cursor=bm90LWEtY3Vyc29y', 'querystring.cursor'],
    [
      `cursor=${Buffer.from(`-271821-04-20T00:00:00.000Z|${randomUUID()}`).toString('base64url')}`,
      'querystring.cursor',
    ],
    ['sort=asc', 'querystring.sort'],
  ])('when the query is %s, then 400 names %s', async (query, path) => {
    const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>().details.map((detail) => detail.path)).toContain(path)
  })

  it.each(['abc', '2.5', '0'])(
    'when the limit is %s, then 400 says it must be a whole number from 1 to 100',
    async (limit) => {
      const response = await app.inject({ method: 'GET', url: `/orders?limit=${limit}` })
      expect(response.statusCode).toBe(400)
      expect(response.json<ErrorBody>().details).toEqual([
        { path: 'querystring.limit', issue: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` },
      ])
    },
  )

  it.each([
    ['limit=10&limit=20', 'limit', 2],
    ['status=PENDING&status=CONFIRMED&status=CANCELLED', 'status', 3],
    ['limit=5&cursor=abc&cursor=abc', 'cursor', 2],
  ])('when the query is %s, then 400 says %s is repeated', async (query, name, times) => {
    const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>()).toEqual({
      error: 'Bad Request',
      message: `The query parameter ${name} is given ${times} times; give it once`,
      details: [{ path: `querystring.${name}`, issue: `is repeated (${times} values)` }],
    })
  })
})

describe('OpenAPI', () => {
  it('when the document is fetched, then the order routes with their success and error responses are in it', async () => {
    const response = await app.inject({ method: 'GET', url: '/documentation/json' })
    const document = response.json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
    }>()
    const codes = (path: string, method: string) =>
      Object.keys(document.paths[path]?.[method]?.responses ?? {}).sort()
    expect(codes('/orders', 'post')).toEqual(['201', '400', '409', '413', '415', '500', '503'])
    expect(codes('/orders/{id}', 'get')).toEqual(['200', '400', '404', '500', '503'])
    expect(codes('/orders', 'get')).toEqual(['200', '400', '500', '503'])
    expect(codes('/orders/stats', 'get')).toEqual(['200', '400', '500', '503'])
  })
})

describe('bad input on the wire', () => {
  const raw = (bytes: Buffer, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: '/orders',
      payload: bytes,
      headers: { 'content-type': 'application/json', ...headers },
    })
  // The body of orderBody() with shippingAddress.name replaced by the bytes 41 <byte> 42.
  const withNameBytes = (byte: number): Buffer => {
    const [head, tail] = JSON.stringify(orderBody({})).split('Ana Lima') as [string, string]
    return Buffer.concat([Buffer.from(head), Buffer.from([0x41, byte, 0x42]), Buffer.from(tail)])
  }

  it('when shippingAddress.name holds a byte that is not UTF-8, then 400 names it and nothing is written', async () => {
    const before = await counts()
    const response = await raw(withNameBytes(0xff))
    expect(response.statusCode).toBe(400)
    const body = response.json<ErrorBody>()
    expect(body.message).toBe('The body is not valid UTF-8')
    expect(body.details).toHaveLength(1)
    expect(body.details[0]?.path).toBe('body')
    expect(body.details[0]?.issue).toMatch(/^byte 0xff at offset \d+ is not valid UTF-8$/)
    expect(await counts()).toEqual(before)
  })

  it('when two requests under one Idempotency-Key differ only in an invalid byte, then neither is taken as a replay', async () => {
    const before = await counts()
    const key = randomUUID()
    const first = await raw(withNameBytes(0xff), { 'idempotency-key': key })
    const second = await raw(withNameBytes(0xfe), { 'idempotency-key': key })
    expect([first.statusCode, second.statusCode]).toEqual([400, 400])
    expect(second.json<ErrorBody>().details[0]?.issue).toContain('0xfe')
    expect(await counts()).toEqual(before)
  })

  it('when the body declares a charset other than UTF-8, then 415 and nothing is written', async () => {
    const before = await counts()
    const response = await raw(Buffer.from(JSON.stringify(orderBody())), {
      'content-type': 'application/json; charset=iso-8859-1',
    })
    expect(response.statusCode).toBe(415)
    expect(response.json<ErrorBody>().details).toEqual([
      { path: 'headers.content-type', issue: 'charset must be utf-8' },
    ])
    expect(await counts()).toEqual(before)
  })

  it('when the body holds __proto__ or constructor.prototype, then 400 says which key is refused', async () => {
    const before = await counts()
    const body = JSON.stringify(orderBody())
    const proto = await raw(Buffer.from(body.replace('{', '{"__proto__":{"status":"CONFIRMED"},')))
    const ctor = await raw(Buffer.from(body.replace('{', '{"constructor":{"prototype":{"x":1}},')))
    expect(proto.statusCode).toBe(400)
    expect(proto.json<ErrorBody>().message).toContain("'__proto__' key")
    expect(ctor.statusCode).toBe(400)
    expect(ctor.json<ErrorBody>().message).toContain("'constructor.prototype' key")
    expect(await counts()).toEqual(before)
  })

  it('when GET /orders/:id has an id over 100 characters, then 414 in the one error shape without echoing the path', async () => {
    const response = await app.inject({ method: 'GET', url: `/orders/${'x'.repeat(101)}` })
    expect(response.statusCode).toBe(414)
    expect(response.json()).toEqual({
      error: 'URI Too Long',
      message: 'A path parameter is longer than 100 characters',
      details: [{ path: 'params', issue: 'is longer than 100 characters' }],
    })
  })
})
