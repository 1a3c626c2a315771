import { describe, expect, it } from 'vitest'
import type { Fleet } from '../src/fleet.js'
import type { PlacedOrder } from '../src/ledger.js'
import { sumMetric } from '../src/metrics.js'
import { releaseBuild } from '../src/release-build.js'
import { SERVICES, type ServiceName } from '../src/run.js'
import { useScenario, type Scenario } from '../src/scenario.js'
import type { ServiceProcess } from '../src/service-process.js'
import { soakStock, startLoad } from '../src/soak/load.js'
import { newSeed, Random } from '../src/soak/random.js'
import { judge, stockUp } from '../src/soak/soak.js'
import { eventually } from '../src/wait.js'

/**
 * The release this test upgrades from: the last commit whose order service publishes only
 * `order.created.v1` and whose payment service reads only v1, on a @saga/messaging that holds a
 * newer version of a message instead of dead-lettering it. It is built once per machine under
 * the temporary directory (`releaseBuild`: `git archive`, `npm ci`, the four services' build; about
 * two minutes here the first time).
 */
const PREVIOUS_RELEASE = '29a73d5fefeb5d39049502666268039bfb170c49'
/** Orders per second of the steady load, a tenth cancelled by their customer. */
const RATE_PER_S = 5

/** The instance of `service` that runs now (the load follows the order service across replacements). */
const running = (fleet: Fleet, service: ServiceName): ServiceProcess =>
  fleet.of(service).find((p) => p.running) ?? fleet.one(service)

/**
 * A rolling replacement of `service`: an instance of this checkout's build (with `env`) starts beside
 * the running ones and is ready before `old` (default: every running instance) stops gracefully, as
 * a Deployment's rolling update does.
 */
async function replace(
  fleet: Fleet,
  service: ServiceName,
  env: Record<string, string> = {},
  old = fleet.of(service).filter((p) => p.running),
): Promise<void> {
  const fresh = await fleet.add(service, env)
  await fresh.waitReady(120_000)
  for (const p of old) await p.stop()
}

/** The first `n` orders the load sends from now on. */
function placedNext(s: Scenario, n = 5): Promise<PlacedOrder[]> {
  const since = Date.now()
  return eventually(
    `${n} orders placed`,
    () => {
      const sent = s.ledger.orders.filter((o) => o.sentAt >= since)
      return Promise.resolve(sent.length >= n && sent.slice(0, n))
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  )
}

/**
 * The saga still flows: the first `n` orders the load sends from now on all end confirmed or
 * cancelled. Returns them.
 */
async function flows(s: Scenario, n = 5): Promise<PlacedOrder[]> {
  const placed = await placedNext(s, n)
  await s.awaitTerminal(placed, 120_000)
  return placed
}

/** The type of the `order.created` each of `orders` was published with, as the tap saw it. */
async function createdTypes(fleet: Fleet, orders: readonly PlacedOrder[]): Promise<string[]> {
  const types = new Set<string>()
  for (const order of orders) {
    const created = await fleet.tap!.waitFor(
      (m) => m.correlationId === order.id && m.routingKey === 'order.created',
      30_000,
      `order.created of ${order.id}`,
    )
    types.add(String(created.type))
  }
  return [...types]
}

// What it costs: the release build once per machine (~2 min), then about a minute of load.
describe('order.created changes from v1 to v2 while the fleet runs', () => {
  const s = useScenario('rolling upgrade of order.created', async () => {
    const previous = await releaseBuild(PREVIOUS_RELEASE)
    return {
      root: Object.fromEntries(SERVICES.map((service) => [service, previous])),
      // The second payment instance is the consumer upgraded late: it runs the previous release until
      // after the producer moved to v2.
      instances: { payment: 2 },
    }
  })

  it('when consumers, then the producer, move to the build that reads both versions, one consumer late, then the producer publishes v2 and rolls back to v1, then orders complete at every step and every invariant holds', async () => {
    const { fleet, ledger } = s
    const stock = soakStock(RATE_PER_S, 120)
    await stockUp(fleet, ledger, stock)
    const seed = process.env.E2E_SOAK_SEED ? Number(process.env.E2E_SOAK_SEED) : newSeed()
    process.stdout.write(`[e2e] rolling upgrade: load seed ${seed}\n`)
    const load = startLoad({
      orderUrl: () => running(fleet, 'order').url,
      ratePerS: RATE_PER_S,
      cancelShare: 0.1,
      stock,
      rng: new Random(seed),
      ledger,
    })
    try {
      await flows(s) // the previous release alone
      // Consumers first, one service at a time; the producer still publishes v1.
      const [payment1, latePayment] = fleet.of('payment')
      await replace(fleet, 'payment', {}, [payment1!])
      await flows(s)
      for (const service of ['inventory', 'shipment'] as const) {
        await replace(fleet, service)
        await flows(s)
      }
      await replace(fleet, 'order') // the new producer, still on v1 by default
      expect(await createdTypes(fleet, await flows(s))).toEqual(['order.created.v1'])
      await replace(fleet, 'order', { ORDER_CREATED_VERSION: '2' })
      const firstV2 = await placedNext(s)
      expect(await createdTypes(fleet, firstV2)).toEqual(['order.created.v2'])
      // The late consumer holds the v2 deliveries it gets (1 s, doubling to 60 s) and puts them back
      // for the upgraded one; the broker's round robin may hand a copy back to it again and again
      // (seven times in a row, two minutes, in one CI run), so how long these orders take while it
      // runs is luck: they are awaited once it has stopped, which requeues what it holds at once.
      const held = await sumMetric(fleet, 'saga_messaging_consumer_held_total', ['payment'])
      process.stdout.write(`[e2e] rolling upgrade: v2 deliveries held by payment instances: ${held}\n`)
      await latePayment!.stop() // the old consumer gone
      await s.awaitTerminal(firstV2, 120_000)
      await flows(s)
      await replace(fleet, 'order', { ORDER_CREATED_VERSION: '1' }) // the rollback
      expect(await createdTypes(fleet, await flows(s))).toEqual(['order.created.v1'])
    } finally {
      const tally = await load.stop()
      expect(tally.refused).toEqual([])
      expect(tally.unresolved).toBe(0)
    }

    const judgement = await judge(fleet, ledger, 180)
    for (const [invariant, violations] of Object.entries(judgement.invariants))
      expect({ invariant, violations: violations.slice(0, 10) }).toEqual({ invariant, violations: [] })
    expect(judgement.broker).toEqual({ deadLettered: [], waiting: [] })
    expect(judgement.orders.total).toBe(ledger.orders.length)
    expect(judgement.orders.confirmed).toBeGreaterThan(0)
  }, 900_000)
})
