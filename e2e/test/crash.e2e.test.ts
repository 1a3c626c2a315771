import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { inBatches, orderBody, setStock } from '../src/api.js'
import type { PlacedOrder } from '../src/ledger.js'
import type { ServiceName } from '../src/run.js'
import { useScenario } from '../src/scenario.js'

/** Scenario 4: kill -9 and restart, with the outbox and inbox carrying the saga across the crash. */
describe('scenario 4: crash and restart', () => {
  const s = useScenario('scenario 4 (kill -9)')

  it('when the order service is killed after answering 201 and before its relay published, then after a restart the order completes', async () => {
    await setStock(s.fleet.one('inventory').url, 'E2E-CRASH', 10_000)
    s.ledger.stock.set('E2E-CRASH', 10_000)
    const order = s.fleet.one('order')
    // The relay publishes right after commit; holding the broker link down is what makes "before its
    // relay ran" certain rather than a race. The row must be pending when the process dies.
    s.fleet.proxy!.cut()
    const placed = await s.place(orderBody([{ sku: 'E2E-CRASH', quantity: 1 }]))
    await order.kill()
    const pending = await s.fleet.dbs!.query(
      'order',
      `SELECT id FROM outbox_message WHERE payload->>'orderId' = $1 AND published_at IS NULL`,
      [placed.id],
    )
    expect(pending).toHaveLength(1)
    s.fleet.proxy!.restore()
    order.start()
    await order.waitReady()
    await s.awaitTerminal([placed], 30_000)
  })

  // Orders the kill test placed, for the invariants after it.
  let placedWhileKilling = 0

  it('when each other service is killed -9 and restarted while orders keep arriving, then every one of them (100 or more) ends terminal', async () => {
    const victims: ServiceName[] = ['payment', 'inventory', 'shipment']
    const bodyAt = (i: number) =>
      i % 10 === 4
        ? orderBody([{ sku: 'E2E-CRASH', quantity: 1 }], { country: 'AQ' })
        : orderBody([{ sku: 'E2E-CRASH', quantity: 1 + (i % 2) }])
    const tap = s.fleet.tap!
    const before = tap.messages.length
    // Orders arrive 8 at a time, 4 times a second, until the last victim is back and 100 are placed:
    // each kill then finds the chain moving however fast the fleet drains (100 placed at once could
    // all be terminal before the last kill, leaving it no traffic to wait for).
    const orders: PlacedOrder[] = []
    let restarted = false
    const placing = (async () => {
      while (!restarted || orders.length < 100) {
        const next = orders.length
        const batch = Array.from({ length: 8 }, (_, j) => () => s.place(bodyAt(next + j)))
        orders.push(...(await inBatches(8, batch)))
        await sleep(250)
      }
    })()
    placing.catch(() => undefined) // awaited below; a failed POST fails the test there
    try {
      for (const victim of victims) {
        const seenBefore = tap.messages.length
        // Kill while the chain is moving: once a few more messages went by since the last restart.
        await tap.waitFor(
          () => tap.messages.length >= seenBefore + 10,
          30_000,
          `traffic before killing ${victim}`,
        )
        const proc = s.fleet.one(victim)
        await proc.kill()
        process.stdout.write(
          `[e2e] scenario 4: killed ${victim} (-9) after ${tap.messages.length - before} messages\n`,
        )
        proc.start()
        await proc.waitReady()
      }
    } finally {
      restarted = true
      await placing
    }
    placedWhileKilling = orders.length
    await s.awaitTerminal(orders, 120_000)
    expect(orders.length).toBeGreaterThanOrEqual(100)
  })

  it('when the crashes are over, then every invariant holds and no effect happened twice', async () => {
    // A kill between the broker's confirm and the relay's commit republishes a row: at-least-once
    // delivery, absorbed by the inboxes. The checker counts such republishes instead of failing them.
    const report = await s.invariants({ allowRepublish: true })
    expect(report.violations).toEqual([])
    expect(report.orders).toBe(1 + placedWhileKilling)
    process.stdout.write(`[e2e] scenario 4: ${report.republished} message(s) republished after the kills\n`)
  })
})
