import { describe, expect, it } from 'vitest'
import { cancelOrder, inBatches, orderBody, setStock } from '../../src/api.js'
import type { PlacedOrder } from '../../src/ledger.js'
import type { Scenario } from '../../src/scenario.js'
import { delay } from '../../src/wait.js'

/**
 * Scenario 10, cancellation by the customer: two instances of every service; 200 orders, and for every other one the
 * customer cancels at a random moment between 0 and 1.5 s after placing it, so cancels land before,
 * during and after each step (and some after the confirmation: 409). Every order ends terminal,
 * every cancelled one is fully compensated, every confirmed one whole (the invariant checker).
 */
export function customerCancels(s: Scenario): void {
  describe('scenario 10: customers cancel half of 200 orders while the chain runs', () => {
    let accepted = 0
    let orders: PlacedOrder[] = []

    it('when half the orders are cancelled at random moments, then all 200 end terminal', async () => {
      await setStock(s.fleet.one('inventory').url, 'E2E-CANCEL', 10_000)
      s.ledger.stock.set('E2E-CANCEL', 10_000)
      const orderUrls = s.fleet.of('order').map((p) => p.url)
      // Settled values, not rejections: the cancels are awaited only after every order was placed.
      const cancels: Promise<200 | 409 | Error>[] = []

      orders = await inBatches(
        8,
        Array.from({ length: 200 }, (_, i) => async () => {
          const url = orderUrls[i % orderUrls.length]!
          const order = await s.place(orderBody([{ sku: 'E2E-CANCEL', quantity: 1 + (i % 3) }]), url)
          if (i % 2 === 1) {
            // The other instance answers half the cancels: the race is between processes, not in one.
            const cancelUrl = orderUrls[(i + 1) % orderUrls.length]!
            cancels.push(
              delay(Math.random() * 1500)
                .then(() => cancelOrder(cancelUrl, order.id))
                .then(
                  (r) => r.status,
                  (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
                ),
            )
          }
          return order
        }),
      )
      const statuses = await Promise.all(cancels)
      const failed = statuses.find((st) => st instanceof Error)
      if (failed) throw failed
      await s.awaitTerminal(orders, 180_000)
      accepted = statuses.filter((st) => st === 200).length
      process.stdout.write(
        `[e2e] scenario 10: ${accepted} cancels accepted, ${100 - accepted} refused as already CONFIRMED\n`,
      )
      expect(statuses).toHaveLength(100)
      expect(accepted).toBeGreaterThan(0)
    })

    it('when the chain settled, then every cancelled order is fully compensated and every confirmed one whole', async () => {
      const report = await s.invariants({ settleMs: 120_000 })
      expect(report.violations).toEqual([])
      // Exactly the accepted cancels ended CANCELLED; every other order confirmed whole.
      expect(await s.statusesOf(orders)).toEqual({ CANCELLED: accepted, CONFIRMED: 200 - accepted })
    })
  })
}
