import fs from 'node:fs'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { placeOrder, retriedPosts, type PlaceOrder } from './api.js'
import { Fleet, type FleetOptions } from './fleet.js'
import { checkInvariants, type InvariantOptions, type InvariantReport } from './invariants.js'
import { Ledger, type PlacedOrder } from './ledger.js'
import { reportLatency } from './stats.js'
import { awaitTerminal } from './terminal.js'

/** The handle a scenario file works with. */
export interface Scenario {
  readonly fleet: Fleet
  readonly ledger: Ledger
  /** Places an order (on `orderUrl`, default the first order instance) and records it. */
  place(body: PlaceOrder, orderUrl?: string): Promise<PlacedOrder>
  /** Waits for a terminal event of every order and records their times-to-terminal. */
  awaitTerminal(orders: readonly PlacedOrder[], timeoutMs?: number): Promise<number[]>
  /** Settles the fleet and runs the invariant checker; logs the summary. */
  invariants(options?: InvariantOptions): Promise<InvariantReport>
  /**
   * How many of `orders` are in each status now, from the order database, e.g. `{ CONFIRMED: 2,
   * CANCELLED: 3 }`: what one scenario checks of its own orders on a fleet others use too.
   */
  statusesOf(orders: readonly PlacedOrder[]): Promise<Record<string, number>>
}

/**
 * Declares the lifecycle of one scenario file: a fresh fleet before its tests, and after them the
 * latency report and a teardown that runs also when a test failed. The run's logs are kept under
 * e2e/.runs/<run id>/ when something failed and removed otherwise. Several scenarios may share the
 * one fleet and ledger (one after another, in one file): the invariants then hold over all their
 * orders, and each checks its own orders' outcome with `statusesOf`. `options` may be a function,
 * run in the same hook before the fleet starts (e.g. to build an older release first).
 */
export function useScenario(
  name: string,
  options: FleetOptions | (() => Promise<FleetOptions>) = {},
): Scenario {
  let fleet: Fleet | undefined
  const ledger = new Ledger()
  const times: number[] = []
  let failed = false

  beforeAll(
    async () => {
      fleet = await Fleet.start(typeof options === 'function' ? await options() : options)
      process.stdout.write(`[e2e] ${name}: run ${fleet.names.id}, logs in ${fleet.logDir}\n`)
    },
    typeof options === 'function' ? 900_000 : 180_000,
  )

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') failed = true
  })

  afterAll(async () => {
    if (times.length > 0) reportLatency(name, times)
    if (retriedPosts.length > 0) {
      process.stdout.write(
        `[e2e] ${name}: ${retriedPosts.length} POST /orders retried with the same Idempotency-Key, first: ${retriedPosts[0]}\n`,
      )
      retriedPosts.length = 0
    }
    if (!fleet) return
    await fleet.stop()
    if (failed) process.stdout.write(`[e2e] ${name}: failed; service logs kept in ${fleet.logDir}\n`)
    else if (!process.env.E2E_KEEP_LOGS) fs.rmSync(fleet.logDir, { recursive: true, force: true })
  }, 120_000)

  const need = (): Fleet => {
    if (!fleet) throw new Error('the fleet did not start')
    return fleet
  }

  return {
    get fleet() {
      return need()
    },
    ledger,
    async place(body, orderUrl) {
      const { order, sentAt } = await placeOrder(orderUrl ?? need().one('order').url, body)
      return ledger.add({ id: order.id, body, sentAt })
    },
    async awaitTerminal(orders, timeoutMs = 60_000) {
      const t = await awaitTerminal(need().tap!, orders, timeoutMs)
      times.push(...t)
      return t
    },
    async invariants(invariantOptions) {
      const report = await checkInvariants(need(), ledger, invariantOptions)
      process.stdout.write(
        `[e2e] ${name}: invariants over ${report.orders} orders (${report.confirmed} confirmed, ${report.cancelled} cancelled), ` +
          `${report.published} messages published, ${report.republished} republished, ${report.violations.length} violations\n`,
      )
      return report
    },
    async statusesOf(orders) {
      const rows = await need().dbs!.query<{ status: string; n: number }>(
        'order',
        'SELECT status, count(*)::int AS n FROM orders WHERE id = ANY($1::uuid[]) GROUP BY status',
        [orders.map((o) => o.id)],
      )
      return Object.fromEntries(rows.map((r) => [r.status, r.n]))
    },
  }
}
