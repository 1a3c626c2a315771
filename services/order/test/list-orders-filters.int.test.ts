import type { ServiceApp } from '@saga/service-kit'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { database } from '../src/plugins/db.js'
import { useOrderRouteApp } from './support/app.js'
import { storedOrder, type StoredOrderSpec } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_filters')
const app = useOrderRouteApp(db)

interface Item {
  id: string
  status: string
  waitingFor: string | null
  deadlineAt: string | null
  cancellationReason: string | null
  failedStep: string | null
  createdAt: string
  updatedAt: string
}
interface Page {
  items: Item[]
  nextCursor: string | null
}

const NOW = Date.now()
const minutesAgo = (m: number) => new Date(NOW - m * 60_000)

// One order of each kind the filters tell apart, created a minute apart (newest last here).
const specs = {
  overdueForPayment: { status: 'PENDING', createdAt: minutesAgo(20), deadlineAt: minutesAgo(10) },
  legacyPending: { status: 'PENDING', createdAt: minutesAgo(19), deadlineAt: null },
  confirmed: {
    status: 'CONFIRMED',
    createdAt: minutesAgo(18),
    endedAt: minutesAgo(17.9),
    facts: ['payment.processed.v1', 'stock.reserved.v1', 'shipment.created.v1', 'order.confirmed.v1'],
  },
  declined: {
    status: 'CANCELLED',
    createdAt: minutesAgo(16),
    endedAt: minutesAgo(15.9),
    cancellationReason: 'card_declined',
    failedStep: 'payment',
    facts: ['payment.failed.v1', 'order.cancelled.v1'],
  },
  customerCancelled: {
    status: 'CANCELLED',
    createdAt: minutesAgo(6),
    endedAt: minutesAgo(5),
    cancellationReason: 'customer_requested',
    facts: ['order.cancelled.v1'],
  },
  forInventory: { status: 'PENDING', createdAt: minutesAgo(4), facts: ['payment.processed.v1'] },
  forShipment: {
    status: 'PENDING',
    createdAt: minutesAgo(3),
    facts: ['payment.processed.v1', 'stock.reserved.v1'],
  },
  // The batch recorder may write StockReserved before PaymentProcessed: the later step counts.
  forShipmentOutOfOrder: { status: 'PENDING', createdAt: minutesAgo(2), facts: ['stock.reserved.v1'] },
  forPayment: { status: 'PENDING', createdAt: minutesAgo(1) },
} satisfies Record<string, StoredOrderSpec>
type Name = keyof typeof specs

const ids = {} as Record<Name, string>
beforeAll(async () => {
  for (const [name, spec] of Object.entries(specs)) ids[name as Name] = await storedOrder(db, spec)
})

const list = async (query: string): Promise<Page> => {
  const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<Page>()
}
/** The names of the orders a query lists, in its order (newest first). */
const names = async (query: string): Promise<string[]> => {
  const byId = new Map(Object.entries(ids).map(([name, id]) => [id, name]))
  return (await list(query)).items.map((item) => byId.get(item.id) ?? item.id)
}
const iso = (date: Date) => encodeURIComponent(date.toISOString())

/** Each filter (a name, the query) and the orders it lists, newest first. */
const FILTER_CASES: Array<[string, string, Name[]]> = [
  ['no filter', '', Object.keys(specs).reverse() as Name[]],
  ['status=CONFIRMED', 'status=CONFIRMED', ['confirmed']],
  [
    'status=PENDING',
    'status=PENDING',
    [
      'forPayment',
      'forShipmentOutOfOrder',
      'forShipment',
      'forInventory',
      'legacyPending',
      'overdueForPayment',
    ],
  ],
  ['waitingFor=payment', 'waitingFor=payment', ['forPayment', 'legacyPending', 'overdueForPayment']],
  ['waitingFor=inventory', 'waitingFor=inventory', ['forInventory']],
  ['waitingFor=shipment', 'waitingFor=shipment', ['forShipmentOutOfOrder', 'forShipment']],
  ['waitingFor with a status that is not PENDING', 'waitingFor=payment&status=CONFIRMED', []],
  ['cancellationReason=card_declined', 'cancellationReason=card_declined', ['declined']],
  ['cancellationReason=customer_requested', 'cancellationReason=customer_requested', ['customerCancelled']],
  ['cancellationReason nobody has', 'cancellationReason=out_of_stock', []],
  [
    'placedAfter (inclusive)',
    `placedAfter=${iso(specs.forInventory.createdAt)}`,
    ['forPayment', 'forShipmentOutOfOrder', 'forShipment', 'forInventory'],
  ],
  [
    'placedBefore (exclusive)',
    `placedBefore=${iso(specs.confirmed.createdAt)}`,
    ['legacyPending', 'overdueForPayment'],
  ],
  [
    'placedAfter and placedBefore with a status',
    `status=CANCELLED&placedAfter=${iso(minutesAgo(17))}&placedBefore=${iso(minutesAgo(0))}`,
    ['customerCancelled', 'declined'],
  ],
  [
    'placedAfter with an offset',
    `placedAfter=${encodeURIComponent(offsetIso(specs.forShipment.createdAt))}`,
    ['forPayment', 'forShipmentOutOfOrder', 'forShipment'],
  ],
  [
    'deadlineBefore now: the overdue PENDING orders',
    `deadlineBefore=${iso(new Date())}`,
    ['overdueForPayment'],
  ],
  [
    'deadlineBefore in 7 minutes and waitingFor',
    `deadlineBefore=${iso(new Date(NOW + 7 * 60_000))}&waitingFor=inventory`,
    ['forInventory'],
  ],
  [
    'deadlineBefore far ahead: every PENDING order with a deadline',
    `deadlineBefore=${iso(new Date(NOW + 3_600_000))}`,
    ['forPayment', 'forShipmentOutOfOrder', 'forShipment', 'forInventory', 'overdueForPayment'],
  ],
]

describe('GET /orders filters', () => {
  it.each(FILTER_CASES)(
    'when filtered by %s, then exactly the matching orders are listed newest first',
    async (_what, query, expected) => {
      expect(await names(query)).toEqual(expected)
    },
  )

  it('when orders are listed, then each item says what it waits for, its deadline, reason, failed step and update time', async () => {
    const items = new Map((await list('limit=100')).items.map((item) => [item.id, item]))
    expect(items.get(ids.forInventory)).toMatchObject({
      status: 'PENDING',
      waitingFor: 'inventory',
      deadlineAt: new Date(specs.forInventory.createdAt.getTime() + 600_000).toISOString(),
      cancellationReason: null,
      failedStep: null,
      updatedAt: specs.forInventory.createdAt.toISOString(),
    })
    expect(items.get(ids.legacyPending)).toMatchObject({ waitingFor: 'payment', deadlineAt: null })
    expect(items.get(ids.declined)).toMatchObject({
      status: 'CANCELLED',
      waitingFor: null,
      cancellationReason: 'card_declined',
      failedStep: 'payment',
      updatedAt: specs.declined.endedAt.toISOString(),
    })
    expect(items.get(ids.confirmed)).toMatchObject({ waitingFor: null, cancellationReason: null })
  })

  it('when one order is read, then it says what it waits for as the list does', async () => {
    const response = await app.inject({ method: 'GET', url: `/orders/${ids.forShipmentOutOfOrder}` })
    expect(response.json<Item>().waitingFor).toBe('shipment')
    const ended = await app.inject({ method: 'GET', url: `/orders/${ids.confirmed}` })
    expect(ended.json<Item>().waitingFor).toBeNull()
  })
})

/** `date` in ISO 8601 with a +05:30 offset (the same instant). */
function offsetIso(date: Date): string {
  const shifted = new Date(date.getTime() + 330 * 60_000)
  return `${shifted.toISOString().slice(0, -1)}+05:30`
}

describe('GET /orders paging with filters', () => {
  const pagingDb = useServiceTestDatabase(database, 'order_filter_pages')
  const pagingApp = useOrderRouteApp(pagingDb)
  const stored: Array<StoredOrderSpec & { id: string }> = []

  // 30 orders over 10 s, three on each millisecond (ties the keyset breaks by id), of each kind in turn.
  beforeAll(async () => {
    for (let i = 0; i < 30; i++) {
      const kind = PAGED_KINDS[i % PAGED_KINDS.length] as StoredOrderSpec
      const createdAt = new Date(NOW - 60_000 + Math.floor(i / 3) * 1000)
      const endedAt = kind.status === 'PENDING' ? undefined : new Date(createdAt.getTime() + 5)
      const spec = { ...kind, createdAt, endedAt }
      stored.push({ ...spec, id: await storedOrder(pagingDb, spec) })
    }
  })

  /** The stored orders `keep` selects, newest first, ties by id descending (the keyset's order). */
  const expected = (keep: (order: StoredOrderSpec) => boolean) =>
    stored
      .filter(keep)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .map((order) => order.id)

  const cutoff = new Date(NOW - 60_000 + 5_000)
  it.each<[string, (order: StoredOrderSpec) => boolean]>([
    ['', () => true],
    ['status=CANCELLED', (o) => o.status === 'CANCELLED'],
    ['waitingFor=inventory', (o) => o.status === 'PENDING' && (o.facts ?? []).length > 0],
    ['waitingFor=payment', (o) => o.status === 'PENDING' && (o.facts ?? []).length === 0],
    ['cancellationReason=card_declined', (o) => o.cancellationReason === 'card_declined'],
    [`placedAfter=${cutoff.toISOString()}`, (o) => o.createdAt >= cutoff],
    [
      `placedBefore=${cutoff.toISOString()}&status=CANCELLED`,
      (o) => o.createdAt < cutoff && o.status === 'CANCELLED',
    ],
    [`deadlineBefore=${new Date(NOW + 3_600_000).toISOString()}`, (o) => o.status === 'PENDING'],
  ])(
    'when "%s" is paged 4 at a time, then the pages hold every match once, newest first',
    async (query, keep) => {
      const want = expected(keep)
      expect(want.length).toBeGreaterThan(4)
      const got = await allPages(pagingApp, query, 4)
      expect(got.ids).toEqual(want)
      expect(got.pages).toBe(Math.ceil(want.length / 4))
    },
  )
})

describe('GET /orders bad filter values', () => {
  it.each([
    ['waitingFor=order', 'querystring.waitingFor'],
    ['waitingFor=PAYMENT', 'querystring.waitingFor'],
    ['cancellationReason=Card-Declined', 'querystring.cancellationReason'],
    [`cancellationReason=${'x'.repeat(200)}`, 'querystring.cancellationReason'],
    ['placedAfter=yesterday', 'querystring.placedAfter'],
    ['placedAfter=2026-12-01', 'querystring.placedAfter'],
    ['placedBefore=2026-13-01T00:00:00Z', 'querystring.placedBefore'],
    ['placedBefore=0000-06-01T00:00:00Z', 'querystring.placedBefore'],
    ['deadlineBefore=0001-01-01T00:00:00%2B05:30', 'querystring.deadlineBefore'],
    ['deadlineBefore=1700000000000', 'querystring.deadlineBefore'],
    ['placedSince=2026-12-01T00:00:00Z', 'querystring.placedSince'],
  ])('when the query is %s, then 400 in the error shape names %s', async (query, path) => {
    const response = await app.inject({ method: 'GET', url: `/orders?${query}` })
    expect(response.statusCode).toBe(400)
    const body = response.json<{
      error: string
      message: string
      details: { path: string; issue: string }[]
    }>()
    expect(body.error).toBe('Bad Request')
    expect(body.message.length).toBeGreaterThan(0)
    expect(body.details.map((detail) => detail.path)).toContain(path)
    expect(body.details.every((detail) => detail.issue.length > 0)).toBe(true)
  })

  it('when a filter is repeated, then 400 says which', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/orders?waitingFor=payment&waitingFor=shipment',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json<{ details: unknown[] }>().details).toEqual([
      { path: 'querystring.waitingFor', issue: 'is repeated (2 values)' },
    ])
  })
})

/** The kinds of order the paging test cycles through: PENDING for payment or inventory, CANCELLED for two reasons, CONFIRMED. */
const PAGED_KINDS: StoredOrderSpec[] = [
  { status: 'PENDING', createdAt: new Date() },
  { status: 'PENDING', createdAt: new Date(), facts: ['payment.processed.v1'] },
  { status: 'CANCELLED', createdAt: new Date(), cancellationReason: 'card_declined', failedStep: 'payment' },
  { status: 'CANCELLED', createdAt: new Date(), cancellationReason: 'out_of_stock', failedStep: 'stock' },
  { status: 'CONFIRMED', createdAt: new Date() },
]

/** Every page of `query`, `limit` at a time, through nextCursor. */
async function allPages(
  app: ServiceApp,
  query: string,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const seen: string[] = []
  let cursor: string | null = null
  let pages = 0
  do {
    const url: string = `/orders?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`
    const response = await app.inject({ method: 'GET', url })
    expect(response.statusCode, response.body).toBe(200)
    const page = response.json<Page>()
    expect(page.items.length).toBeLessThanOrEqual(limit)
    seen.push(...page.items.map((item) => item.id))
    cursor = page.nextCursor
    pages++
  } while (cursor)
  return { ids: seen, pages }
}
