import { describe, expect, it } from 'vitest'
import { inBatches, orderBody, setStock } from '../../src/api.js'
import type { PlacedOrder } from '../../src/ledger.js'
import type { Scenario } from '../../src/scenario.js'

/**
 * Scenario 2: two instances of every service; 200 orders sent 8 at a time, alternating between the
 * two order instances, in a mix that exercises every outcome (declines, unsupported country, a SKU
 * that runs out under concurrent orders).
 */
export function scaleOut(s: Scenario): void {
  describe('scenario 2: two instances of every service under load', () => {
    let orders: PlacedOrder[] = []

    it('when 200 orders arrive 8 at a time across both order instances, then all 200 end terminal', async () => {
      const [inv1, inv2] = s.fleet.of('inventory')
      await setStock(inv1!.url, 'E2E-PLENTY', 10_000)
      await setStock(inv2!.url, 'E2E-SCARCE', 25)
      s.ledger.stock.set('E2E-PLENTY', 10_000)
      s.ledger.stock.set('E2E-SCARCE', 25)
      const orderUrls = s.fleet.of('order').map((p) => p.url)

      const bodies = Array.from({ length: 200 }, (_, i) => {
        if (i % 10 === 3)
          return orderBody([{ sku: 'E2E-PLENTY', quantity: 1 }], { paymentMethod: 'tok_chargeDeclined' })
        if (i % 10 === 7) return orderBody([{ sku: 'E2E-PLENTY', quantity: 2 }], { country: 'AQ' })
        if (i % 4 === 1)
          return orderBody([
            { sku: 'E2E-SCARCE', quantity: 1 },
            { sku: 'E2E-PLENTY', quantity: 1 },
          ])
        return orderBody([{ sku: 'E2E-PLENTY', quantity: 1 + (i % 3) }])
      })
      const started = Date.now()
      orders = await inBatches(
        8,
        bodies.map((body, i) => () => s.place(body, orderUrls[i % orderUrls.length])),
      )
      await s.awaitTerminal(orders, 120_000)
      const seconds = (Date.now() - started) / 1000
      process.stdout.write(
        `[e2e] scenario 2: 200 orders terminal after ${seconds.toFixed(1)} s (${(200 / seconds).toFixed(0)} orders/s)\n`,
      )

      const scarce = orders.filter((o) => o.body.items.some((l) => l.sku === 'E2E-SCARCE'))
      expect(scarce.length).toBeGreaterThan(25) // more asked for than there is: some must be refused
      expect(new Set(orders.map((o) => o.id)).size).toBe(200)
    })

    it('when the load is over, then every invariant holds and each message id was published once', async () => {
      const report = await s.invariants()
      expect(report.violations).toEqual([])
      const statuses = await s.statusesOf(orders)
      expect(Object.keys(statuses).sort()).toEqual(['CANCELLED', 'CONFIRMED'])
      expect((statuses.CANCELLED ?? 0) + (statuses.CONFIRMED ?? 0)).toBe(200)
      expect(report.republished).toBe(0)
    })
  })
}
