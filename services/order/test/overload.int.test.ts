import { pgDatabase } from '@saga/messaging'
import { createServiceApp, overloadPlugin, SPELL_QUIET_MS } from '@saga/service-kit'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest'
import { orderRoutes } from '../src/routes/orders.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { orderBody } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_overload')
let app: Awaited<ReturnType<typeof createServiceApp>>
let warn: MockInstance
let info: MockInstance

// A deliberately tiny threshold: more than one query waiting for one of the test pool's 10
// connections, sampled every 10 ms. A burst of 50 concurrent POSTs passes it; the defaults need 10.
beforeAll(async () => {
  app = await createServiceApp({ service: 'order', logLevel: 'silent', fastify: { logger: false } })
  // Without a logger the app logs to fastify's no-op one; its lines are read through these spies.
  warn = vi.spyOn(app.log, 'warn')
  info = vi.spyOn(app.log, 'info')
  await app.register(overloadPlugin, {
    maxEventLoopDelayMs: 0,
    maxPoolWaiting: 1,
    pool: db.pool,
    sampleIntervalMs: 10,
    retryAfterS: 2,
  })
  await app.register(orderRoutes, {
    db: db.prisma,
    database: pgDatabase(db.pool),
    clock: () => new Date(),
  })
  await app.ready()
})
afterAll(async () => {
  await app?.close()
  vi.restoreAllMocks()
})

type Line = [Record<string, unknown>, string]
const linesOf = (spy: MockInstance, message: RegExp): Record<string, unknown>[] =>
  (spy.mock.calls as Line[]).filter(([, msg]) => message.test(String(msg))).map(([fields]) => fields)
const spellStarts = (spy = warn) => linesOf(spy, /^overloaded \(/)
const spellEnds = (spy = info) => linesOf(spy, /^no longer overloaded/)
/** Polls `done` every 20 ms until it holds or `ms` pass (a deadline that only ends a hang). */
const until = async (done: () => boolean, ms = 30_000) => {
  const deadline = Date.now() + ms
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
}

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
    // Only ends a service that never accepts again; the sampler may run late on a loaded machine.
    const deadline = Date.now() + 30_000
    let status = 0
    while (status !== 201 && Date.now() < deadline) {
      status = (await post()).statusCode
      if (status !== 201) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(status).toBe(201)
    expect(app.overload.reason()).toBeUndefined()
  })

  it('when the shedding is over, then each spell was logged twice: its start with the signal, its end with its own count and length', async () => {
    await until(() => spellEnds().length === spellStarts().length)
    const starts = spellStarts()
    const ends = spellEnds()
    expect(starts.length).toBeGreaterThan(0)
    expect(ends).toHaveLength(starts.length)
    // Not a line per shed request: a burst of 20 sheds makes a spell or a few.
    if (app.overload.shed > 1) expect(starts.length).toBeLessThan(app.overload.shed)
    for (const start of starts) {
      expect(start).toMatchObject({ reason: 'pool-waiting', limit: 1 })
      expect(start.poolWaiting).toBeGreaterThan(1)
    }
    for (const end of ends) {
      expect(end).toMatchObject({ reason: 'pool-waiting' })
      expect(end.durationMs).toBeGreaterThanOrEqual(0)
      expect(Object.keys(end).sort()).toEqual(['durationMs', 'reason', 'shed'])
    }
    // The spells' own counts add up to the total /metrics exports as saga_http_requests_shed_total.
    expect(ends.reduce((sum, end) => sum + Number(end.shed), 0)).toBe(app.overload.shed)
  })
})

// The spell's clock is faked (timers and Date): the samplers run exactly when the test advances the
// time, so a flicker lasts what the test says and a spell's length is known to the sample, whatever
// the machine's load. Requests go through `inject`, which needs no timer.
describe('shedding spells, on a pool whose waiters the test sets', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("when the pressure flickers within a spell, then one start and one end are logged, with the spell's shed count and length", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
    const pool = { waitingCount: 0 }
    const kit = await createServiceApp({ service: 'order', logLevel: 'silent', fastify: { logger: false } })
    await kit.register(overloadPlugin, {
      maxEventLoopDelayMs: 0,
      maxPoolWaiting: 1,
      pool,
      sampleIntervalMs: 10,
      retryAfterS: 2,
    })
    kit.post('/things', () => ({ ok: true }))
    await kit.ready()
    const kitWarn = vi.spyOn(kit.log, 'warn')
    const kitInfo = vi.spyOn(kit.log, 'info')
    // Five samples: both the pressure check and the spell watcher (each every 10 ms) have run.
    const samples = () => vi.advanceTimersByTimeAsync(50)
    try {
      const pressed = Date.now()
      pool.waitingCount = 5
      await samples()
      expect(kit.overload.reason()).toBe('pool-waiting')
      for (let i = 0; i < 3; i++)
        expect((await kit.inject({ method: 'POST', url: '/things' })).statusCode).toBe(503)
      // A flicker far shorter than SPELL_QUIET_MS belongs to the same spell.
      pool.waitingCount = 0
      await samples()
      expect(kit.overload.reason()).toBeUndefined()
      pool.waitingCount = 7
      await samples()
      expect(kit.overload.reason()).toBe('pool-waiting')
      expect((await kit.inject({ method: 'POST', url: '/things' })).statusCode).toBe(503)
      const relieved = Date.now()
      pool.waitingCount = 0
      await vi.advanceTimersByTimeAsync(SPELL_QUIET_MS - 100)
      expect(spellEnds(kitInfo)).toEqual([])
      await vi.advanceTimersByTimeAsync(200)

      expect(spellStarts(kitWarn)).toEqual([{ reason: 'pool-waiting', poolWaiting: 5, limit: 1 }])
      const ends = spellEnds(kitInfo)
      expect(ends).toHaveLength(1)
      expect(ends[0]).toMatchObject({ reason: 'pool-waiting', shed: 4 })
      // Its length runs to when the pressure went, not to when the quiet period confirmed it (that
      // would be SPELL_QUIET_MS more): the pressure lasted `relieved - pressed`, give or take two samples.
      const held = relieved - pressed
      expect(Math.abs(Number(ends[0]?.durationMs) - held)).toBeLessThanOrEqual(20)
      expect(kit.overload.shed).toBe(4)
      expect((await kit.inject({ method: 'POST', url: '/things' })).statusCode).toBe(200)
    } finally {
      await kit.close()
    }
  })
})
