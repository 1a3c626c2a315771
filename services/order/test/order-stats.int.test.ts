import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { database } from '../src/plugins/db.js'
import { useOrderRouteApp } from './support/app.js'
import { storedOrder } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_stats')
const app = useOrderRouteApp(db)

interface Bucket {
  at: string
  confirmed: number
  cancelled: number
  latencyP50Ms: number | null
  latencyP99Ms: number | null
}
interface Stats {
  at: string
  byStatus: Record<string, number>
  pendingByStep: Record<string, number>
  pendingOverdue: number
  buckets: Bucket[]
}

const NOW = Date.now()
const ago = (ms: number) => new Date(NOW - ms)
// Four orders end on one instant 55 s ago (confirmed after 100, 200, 300 ms, cancelled after 400 ms),
// one 95 s ago (confirmed after 1.5 s), one 400 s ago: a 70 s window holds only the first instant,
// the default 300 s window both, neither the last (the query runs within seconds of this).
const RECENT = ago(55_000)
const EARLIER = ago(95_000)
const bucketOf = (date: Date) => new Date(Math.floor(date.getTime() / 10_000) * 10_000).toISOString()

beforeAll(async () => {
  const ended = (status: 'CONFIRMED' | 'CANCELLED', endedAt: Date, tookMs: number) =>
    storedOrder(db, {
      status,
      createdAt: new Date(endedAt.getTime() - tookMs),
      endedAt,
      ...(status === 'CANCELLED' ? { cancellationReason: 'card_declined', failedStep: 'payment' } : {}),
    })
  for (const took of [300, 100, 200]) await ended('CONFIRMED', RECENT, took)
  await ended('CANCELLED', RECENT, 400)
  await ended('CONFIRMED', EARLIER, 1_500)
  await ended('CONFIRMED', ago(400_000), 50)
  const pending = (createdAt: Date, facts: string[] = []) =>
    storedOrder(db, { status: 'PENDING', createdAt, facts })
  await pending(ago(700_000))
  await pending(ago(1_000))
  await pending(ago(2_000), ['payment.processed.v1'])
  await pending(ago(900_000), ['payment.processed.v1', 'stock.reserved.v1'])
})

const stats = async (query = ''): Promise<Stats> => {
  const response = await app.inject({ method: 'GET', url: `/orders/stats${query}` })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<Stats>()
}

describe('GET /orders/stats', () => {
  it('when asked, then it counts the orders by status, the PENDING ones by step and those past their deadline', async () => {
    const body = await stats()
    expect(body.byStatus).toEqual({ PENDING: 4, CONFIRMED: 5, CANCELLED: 1 })
    expect(body.pendingByStep).toEqual({ payment: 2, inventory: 1, shipment: 1 })
    expect(body.pendingOverdue).toBe(2)
    expect(Math.abs(new Date(body.at).getTime() - Date.now())).toBeLessThan(60_000)
  })

  it('when the window is the default 300 s, then 30 buckets of 10 s count the orders that ended in each, with their latencies', async () => {
    const body = await stats()
    expect(body.buckets).toHaveLength(30)
    const byAt = new Map(body.buckets.map((bucket) => [bucket.at, bucket]))
    expect(byAt.get(bucketOf(RECENT))).toEqual({
      at: bucketOf(RECENT),
      confirmed: 3,
      cancelled: 1,
      latencyP50Ms: 200,
      latencyP99Ms: 400,
    })
    expect(byAt.get(bucketOf(EARLIER))).toEqual({
      at: bucketOf(EARLIER),
      confirmed: 1,
      cancelled: 0,
      latencyP50Ms: 1_500,
      latencyP99Ms: 1_500,
    })
    const others = body.buckets.filter((b) => b.at !== bucketOf(RECENT) && b.at !== bucketOf(EARLIER))
    expect(others).toHaveLength(28)
    for (const bucket of others) {
      expect(bucket).toMatchObject({ confirmed: 0, cancelled: 0, latencyP50Ms: null, latencyP99Ms: null })
    }
  })

  it('when the window is 70 s, then 7 buckets hold only what ended in them', async () => {
    const body = await stats('?windowSeconds=70')
    expect(body.buckets).toHaveLength(7)
    expect(body.buckets.reduce((sum, b) => sum + b.confirmed, 0)).toBe(3)
    expect(body.buckets.reduce((sum, b) => sum + b.cancelled, 0)).toBe(1)
    expect(body.byStatus).toEqual({ PENDING: 4, CONFIRMED: 5, CANCELLED: 1 })
  })

  it.each([10, 300, 3600])(
    'when the window is %i s, then the buckets are 10 s apart, oldest first, the last holding now',
    async (windowSeconds) => {
      const body = await stats(`?windowSeconds=${windowSeconds}`)
      const starts = body.buckets.map((bucket) => new Date(bucket.at).getTime())
      expect(starts).toHaveLength(windowSeconds / 10)
      expect(starts.every((at) => at % 10_000 === 0)).toBe(true)
      expect(starts.slice(1).every((at, i) => at - (starts[i] ?? 0) === 10_000)).toBe(true)
      const now = new Date(body.at).getTime()
      const last = starts.at(-1) ?? 0
      expect(now >= last && now < last + 10_000).toBe(true)
    },
  )
})

describe('GET /orders/stats bad windows', () => {
  it.each([
    ['windowSeconds=0', 'querystring.windowSeconds'],
    ['windowSeconds=-10', 'querystring.windowSeconds'],
    ['windowSeconds=15', 'querystring.windowSeconds'],
    ['windowSeconds=3610', 'querystring.windowSeconds'],
    ['windowSeconds=12.5', 'querystring.windowSeconds'],
    ['windowSeconds=five', 'querystring.windowSeconds'],
    ['window=300', 'querystring.window'],
  ])('when the query is %s, then 400 in the error shape names %s', async (query, path) => {
    const response = await app.inject({ method: 'GET', url: `/orders/stats?${query}` })
    expect(response.statusCode).toBe(400)
    const body = response.json<{
      error: string
      message: string
      details: { path: string; issue: string }[]
    }>()
    expect(body.error).toBe('Bad Request')
    expect(body.details.map((detail) => detail.path)).toContain(path)
  })

  it('when windowSeconds is repeated, then 400 says so', async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/orders/stats?windowSeconds=10&windowSeconds=20',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json<{ details: unknown[] }>().details).toEqual([
      { path: 'querystring.windowSeconds', issue: 'is repeated (2 values)' },
    ])
  })
})
