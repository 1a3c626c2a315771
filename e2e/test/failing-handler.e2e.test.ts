import { describe, expect, it } from 'vitest'
import { orderBody, setStock } from '../src/api.js'
import { orderCli } from '../src/cli.js'
import { sumMetric } from '../src/metrics.js'
import { useScenario } from '../src/scenario.js'
import { eventually } from '../src/wait.js'

/**
 * Scenario 7: the shipment handler fails while CARRIER_ACCOUNT is missing (it throws a transient
 * error by design); the message is retried, and after the setting is supplied and the service
 * restarted the order completes with one shipment.
 */
describe('scenario 7: a handler failing until its configuration is fixed', () => {
  const s = useScenario('scenario 7 (missing CARRIER_ACCOUNT)', {
    // Enough attempts that the message is still being retried when the operator fixes the setting.
    env: { shipment: { CARRIER_ACCOUNT: '', CONSUMER_MAX_ATTEMPTS: '1000' } },
  })

  it('when the carrier account is missing, then the shipment is retried and the order completes once it is supplied', async () => {
    await setStock(s.fleet.one('inventory').url, 'E2E-CONFIG', 5)
    s.ledger.stock.set('E2E-CONFIG', 5)
    const order = await s.place(orderBody([{ sku: 'E2E-CONFIG', quantity: 1 }]))
    const shipment = s.fleet.one('shipment')

    await eventually(
      'the shipment handler retried at least twice',
      async () => (await sumMetric(s.fleet, 'saga_messaging_consumer_retried_total', ['shipment'])) >= 2,
      { timeoutMs: 30_000, intervalMs: 200 },
    )
    const where = await orderCli(s.fleet, ['where', order.id])
    expect(where).toMatch(/waiting for: shipment\.created or shipment\.failed from shipment/)
    expect(shipment.tail(200)).toContain('CARRIER_ACCOUNT')

    await shipment.restart({ CARRIER_ACCOUNT: 'e2e-carrier' })
    await s.awaitTerminal([order], 60_000)
    const chain = s.fleet.tap!.chain(order.id).map((m) => m.routingKey)
    expect(chain).toContain('order.confirmed')
    const shipments = await s.fleet.dbs!.query(
      'shipment',
      `SELECT carrier_account FROM shipment WHERE order_id = $1`,
      [order.id],
    )
    expect(shipments).toEqual([{ carrier_account: 'e2e-carrier' }])
  })

  it('when the handler recovered, then every invariant holds', async () => {
    const report = await s.invariants()
    expect(report.violations).toEqual([])
  })
})
