import { randomUUID } from 'node:crypto'
import type { OrderLookup, OrderPage } from '@saga/contracts'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { describe, expect, it } from 'vitest'
import { database } from '../src/plugins/db.js'
import { useOrderRouteApp } from './support/app.js'
import { orderBody } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_search')
const app = useOrderRouteApp(db)

/** Places an order through POST /orders; returns its id. */
async function place(customerId: string = randomUUID(), key?: string): Promise<string> {
  const response = await app.inject({
    method: 'POST',
    url: '/orders',
    payload: orderBody({ customerId }),
    headers: key === undefined ? {} : { 'idempotency-key': key },
  })
  expect(response.statusCode, response.body).toBe(201)
  return response.json<{ id: string }>().id
}

const lookup = async (id: string): Promise<OrderLookup> => {
  const response = await app.inject({ method: 'GET', url: `/orders/lookup?id=${encodeURIComponent(id)}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<OrderLookup>()
}

const list = async (query: string): Promise<OrderPage> => {
  const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<OrderPage>()
}

describe('GET /orders/lookup', () => {
  it('when the text is an order id, its start, a customer id, an Idempotency-Key or a message id, then the order is found as that kind', async () => {
    const customerId = randomUUID()
    const key = `search-key-${randomUUID()}`
    const id = await place(customerId, key)
    const other = await place()
    const { rows } = await db.pool.query<{ message_id: string }>(
      'SELECT message_id::text FROM order_events WHERE order_id = $1',
      [id],
    )
    const messageId = rows[0]!.message_id

    expect((await lookup(id)).matches).toEqual([{ kind: 'order', orderId: id }])
    expect((await lookup(id.toUpperCase())).matches).toEqual([{ kind: 'order', orderId: id }])
    expect((await lookup(customerId)).matches).toEqual([{ kind: 'customer', orderId: id }])
    expect((await lookup(key)).matches).toEqual([{ kind: 'idempotencyKey', orderId: id }])
    expect((await lookup(messageId)).matches).toEqual([{ kind: 'message', orderId: id }])
    // The first 13 characters (12 hex digits) name one order among a few here.
    expect((await lookup(id.slice(0, 13))).matches).toEqual([{ kind: 'idPrefix', orderId: id }])
    expect((await lookup(other)).matches).toEqual([{ kind: 'order', orderId: other }])
  })

  it('when a customer has three orders, then two are answered, newest first (a second says: list them)', async () => {
    const customerId = randomUUID()
    const ids = [await place(customerId), await place(customerId), await place(customerId)]
    const { matches } = await lookup(customerId)
    expect(matches.map((m) => m.kind)).toEqual(['customer', 'customer'])
    expect(ids).toEqual(expect.arrayContaining(matches.map((m) => m.orderId)))
    expect(new Set(matches.map((m) => m.orderId)).size).toBe(2)
  })

  it('when nothing has the text, or it is too short to be a start, then no match and 200', async () => {
    await place()
    expect((await lookup(randomUUID())).matches).toEqual([])
    expect((await lookup('abc')).matches).toEqual([])
    expect((await lookup('no such key')).matches).toEqual([])
  })

  it('when the id is missing or not printable ASCII, then 400 names querystring.id', async () => {
    for (const url of ['/orders/lookup', '/orders/lookup?id=', '/orders/lookup?id=%C3%A9']) {
      const response = await app.inject({ method: 'GET', url })
      expect(response.statusCode, url).toBe(400)
      expect(response.json<{ details: { path: string }[] }>().details.map((d) => d.path)).toContain(
        'querystring.id',
      )
    }
  })
})

describe('GET /orders by customer and by id prefix', () => {
  it("when filtered by customerId, then only that customer's orders, newest first", async () => {
    const customerId = randomUUID()
    const mine = [await place(customerId), await place(customerId)]
    await place()
    const page = await list(`customerId=${customerId}`)
    expect(page.items.map((o) => o.id).sort()).toEqual([...mine].sort())
    expect(page.items.every((o) => o.customerId === customerId)).toBe(true)
  })

  it('when filtered by idPrefix, then the orders whose id starts so, dashes and case ignored', async () => {
    const id = await place()
    const prefix = id.slice(0, 10).toUpperCase()
    const page = await list(`idPrefix=${prefix}`)
    expect(page.items.map((o) => o.id)).toEqual([id])
    expect((await list(`idPrefix=${id.replaceAll('-', '').slice(0, 9)}`)).items.map((o) => o.id)).toContain(
      id,
    )
  })

  it.each(['idPrefix=xyz', `idPrefix=${'a'.repeat(33)}`, 'idPrefix=-', 'customerId=42'])(
    'when the query is %s, then 400',
    async (query) => {
      const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
      expect(response.statusCode).toBe(400)
    },
  )
})

describe('GET /orders keyset paging while orders arrive', () => {
  it.each([
    ['all orders', false],
    ["one customer's orders", true],
  ])(
    'when %s are paged while new ones are placed, then every order placed before holds its place once, no gap, no repeat',
    async (_name, byCustomer) => {
      const customerId = randomUUID()
      const before: string[] = []
      for (let i = 0; i < 23; i++) before.push(await place(customerId))
      const filter = byCustomer ? `customerId=${customerId}&` : ''

      // A writer placing orders (for the same customer) the whole time the pages are read.
      let paging = true
      const arrived: string[] = []
      const writer = (async () => {
        while (paging) arrived.push(await place(customerId))
      })()
      const seen: OrderPage['items'] = []
      let cursor: string | null = null
      try {
        do {
          const page: OrderPage = await list(`${filter}limit=5${cursor ? `&cursor=${cursor}` : ''}`)
          seen.push(...page.items)
          cursor = page.nextCursor
          // Let at least one order arrive between every two pages.
          const count = arrived.length
          while (cursor && paging && arrived.length === count) await new Promise(setImmediate)
        } while (cursor)
      } finally {
        paging = false
        await writer
      }

      const ids = seen.map((o) => o.id)
      expect(new Set(ids).size).toBe(ids.length)
      // Newest first, strictly, by (createdAt, id): the keyset's order.
      for (let i = 1; i < seen.length; i++) {
        const [a, b] = [seen[i - 1]!, seen[i]!]
        expect(a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)).toBe(true)
      }
      expect(arrived.length).toBeGreaterThan(0)
      // Every order placed before paging started is there, in the order placed (newest first).
      const placedBefore = new Set(before)
      expect(ids.filter((id) => placedBefore.has(id))).toEqual([...before].reverse())
    },
  )
})
