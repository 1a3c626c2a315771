import { describe, expect, it } from 'vitest'
import { orderBody, setStock } from '../src/api.js'
import type { PlacedOrder } from '../src/ledger.js'
import { useScenario } from '../src/scenario.js'
import { delay } from '../src/wait.js'

const OUTAGE_MS = 11_000

/** Scenario 3: the services reach RabbitMQ through a proxy the suite cuts for 11 s. */
describe('scenario 3: broker outage', () => {
  const s = useScenario('scenario 3 (broker outage 11 s)')

  it('when the broker link is cut while 5 orders are placed, then all get 201 and complete after it returns', async () => {
    await setStock(s.fleet.one('inventory').url, 'E2E-OUTAGE', 100)
    s.ledger.stock.set('E2E-OUTAGE', 100)
    const proxy = s.fleet.proxy!

    proxy.cut()
    const cutAt = Date.now()
    const orders: PlacedOrder[] = []
    for (let i = 0; i < 5; i++) {
      orders.push(await s.place(orderBody([{ sku: 'E2E-OUTAGE', quantity: 1 }])))
    }
    // The outage lasts a fixed time by definition of the scenario; this is the outage, not a wait for a fact.
    await delay(OUTAGE_MS - (Date.now() - cutAt))
    expect(s.fleet.tap!.messages.filter((m) => orders.some((o) => o.id === m.correlationId))).toEqual([])
    proxy.restore()
    const restoredAt = Date.now()

    await s.awaitTerminal(orders, 60_000)
    const terminalAt = (id: string): number =>
      s.fleet
        .tap!.chain(id)
        .find((m) => m.routingKey === 'order.confirmed' || m.routingKey === 'order.cancelled')?.receivedAt ??
      Number.NaN
    const lastTerminal = Math.max(...orders.map((o) => terminalAt(o.id)))
    process.stdout.write(
      `[e2e] scenario 3: the 5 orders completed ${lastTerminal - restoredAt} ms after the link returned\n`,
    )
  })

  it('when the outage is over, then every invariant holds', async () => {
    const report = await s.invariants()
    expect(report.violations).toEqual([])
    expect(report.confirmed).toBe(5)
  })
})
