import { pgDatabase } from '@saga/messaging'
import { createServiceApp, overloadPlugin } from '@saga/service-kit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { orderRoutes } from '../src/routes/orders.js'
import { createServiceTestDatabase, type ServiceTestDatabase } from './support/database.js'
import { orderBody } from './support/orders.js'

let db: ServiceTestDatabase
let app: Awaited<ReturnType<typeof createServiceApp>>

// A deliberately tiny threshold: more than one query waiting for one of the test pool's 10
// connections, sampled every 10 ms. A burst of 50 concurrent POSTs passes it; the defaults need 10.
beforeAll(async () => {
  db = await createServiceTestDatabase('order_overload')
  app = await createServiceApp({ service: 'order', logLevel: 'silent', fastify: { logger: false } })
  await app.register(overloadPlugin, {
    maxEventLoopDelayMs: 0,
    maxPoolWaiting: 1,
    pool: db.pool,
    sampleIntervalMs: 10,
    retryAfterS: 2,
  })
  await app.register(orderRoutes, { db: db.prisma, transactor: pgDatabase(db.pool) })
  await app.ready()
})
afterAll(async () => {
  await app?.close()
  await db?.drop()
})

const post = () => app.inject({ method: 'POST', url: '/orders', payload: orderBody() })
const countOrders = async () =>
  Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM orders')).rows[0]?.n)

describe('load shedding of POST /orders', () => {
  it('when bursts keep more queries waiting for the pool than allowed, then some POSTs are shed with 503 + Retry-After in the error shape, none is a 500, reads are still answered, and a shed POST created nothing', async () => {
    const statuses: Record<number, number> = {}
    const shed: Awaited<ReturnType<typeof post>>[] = []
    const reads: number[] = []
    const deadline = Date.now() + 20_000
    // 50 clients, each sending its next POST as soon as the last one is answered: the pool always
    // has waiters, so the 10 ms sampler sees them. They stop at the deadline or after 20 sheds.
    const client = async () => {
      while (shed.length < 20 && Date.now() < deadline) {
        const response = await post()
        statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1
        if (response.statusCode === 503) {
          shed.push(response)
          reads.push((await app.inject({ method: 'GET', url: '/orders?limit=1' })).statusCode)
        }
      }
    }
    await Promise.all(Array.from({ length: 50 }, client))

    expect(shed.length).toBeGreaterThan(0)
    expect(Object.keys(statuses).sort()).toEqual(['201', '503'])
    for (const response of shed) {
      expect(response.headers['retry-after']).toBe('2')
      const body = response.json<Record<string, unknown>>()
      expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId'])
      expect(body).toMatchObject({
        error: 'Service Unavailable',
        requestId: response.headers['x-request-id'],
      })
      expect(body.message).toMatch(/overloaded; retry in 2 s/)
    }
    // Reads sent right after a shed POST, while the service was shedding, are answered.
    expect(new Set(reads)).toEqual(new Set([200]))
    // Every 201 is an order, and no 503 left one behind.
    expect(await countOrders()).toBe(statuses[201])
    expect(app.overload.shed).toBe(shed.length)
  })

  it('when the burst is over and the pool has no waiters, then POSTs are accepted again', async () => {
    const deadline = Date.now() + 5_000
    let status = 0
    while (status !== 201 && Date.now() < deadline) {
      status = (await post()).statusCode
      if (status !== 201) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(status).toBe(201)
    expect(app.overload.reason()).toBeUndefined()
  })
})
