import { startServiceUnderTest, type ServiceUnderTest } from '@saga/testkit'
import { expect } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { orderBody } from './orders.js'

/** The order service as its database-outage tests boot it: in process, answering through `inject`. */
export type OrderApp = Awaited<ReturnType<typeof buildApp>>

/**
 * Boots the order service on a fresh database of `adminUrl`'s server (default the shared one, see
 * `startServiceUnderTest`), with its broker and database links through fault proxies; `env` is added
 * to its environment (e.g. `{ DATABASE_STATEMENT_TIMEOUT_MS: '0' }`).
 */
export function startOrderUnderTest(
  adminUrl?: string,
  env: Record<string, string> = {},
): Promise<ServiceUnderTest<OrderApp>> {
  const boot = async (base: Record<string, string>) => {
    const app = await buildApp(loadConfig({ ...base, ...env }), { fastify: { logger: false } })
    await app.ready()
    return app
  }
  return startServiceUnderTest('order', boot, adminUrl === undefined ? {} : { adminUrl })
}

/** One POST /orders: its status, Retry-After, how long it took (ms) and the order id when 201. */
export interface Outcome {
  status: number
  retryAfter: string | undefined
  ms: number
  id: string | undefined
}

/** What the outage tests do to one service under test: place orders under a fault and judge the answers. */
export function outageProbe(s: () => ServiceUnderTest<OrderApp>) {
  async function placeOrder(): Promise<Outcome> {
    const started = performance.now()
    const res = await s().app.inject({ method: 'POST', url: '/orders', payload: orderBody() })
    const id = res.statusCode === 201 ? res.json<{ id: string }>().id : undefined
    const retryAfter = res.headers['retry-after']
    return { status: res.statusCode, retryAfter, ms: performance.now() - started, id }
  }

  /** `total` orders, `concurrency` at a time; `fault` runs once `faultAfter` have been answered. */
  async function placeUnderFault(
    total: number,
    concurrency: number,
    faultAfter: number,
    fault: () => Promise<void>,
  ): Promise<Outcome[]> {
    const outcomes: Outcome[] = []
    let started = 0
    let faulted: Promise<void> | undefined
    const worker = async () => {
      while (started < total) {
        started += 1
        outcomes.push(await placeOrder())
        if (outcomes.length >= faultAfter) faulted ??= fault()
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
    await faulted
    return outcomes
  }

  /**
   * Polls POST /orders until it is 201 again; the service must recover by itself. The 30 s deadline
   * only ends a service that never recovers (on a loaded machine recovery can take seconds).
   */
  async function recovered(): Promise<Outcome> {
    const deadline = Date.now() + 30_000
    for (;;) {
      const outcome = await placeOrder()
      if (outcome.status === 201 || Date.now() > deadline) return outcome
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  /** Every answer is 201, or 503 with Retry-After; every 201 order is stored. Prints the tally. */
  async function expectOnly201Or503(fault: string, outcomes: Outcome[]): Promise<void> {
    const tally = new Map<number, number>()
    for (const o of outcomes) tally.set(o.status, (tally.get(o.status) ?? 0) + 1)
    const slowest = Math.round(Math.max(...outcomes.map((o) => o.ms)))
    console.info(`${fault}: ${[...tally].map(([k, n]) => `${n} x ${k}`).join(', ')}; slowest ${slowest} ms`)
    const statuses = outcomes.map((o) => o.status)
    expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([])
    expect(outcomes.filter((o) => o.status === 503 && o.retryAfter !== '2')).toEqual([])
    const ids = outcomes.flatMap((o) => (o.id ? [o.id] : []))
    const stored = await s().db.pool.query('SELECT id FROM orders WHERE id = ANY($1::uuid[])', [ids])
    expect(stored.rowCount).toBe(ids.length)
  }

  return { placeOrder, placeUnderFault, recovered, expectOnly201Or503 }
}
