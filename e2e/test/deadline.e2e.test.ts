import { describe, expect, it } from 'vitest'
import { getOrder, getStock, orderBody, setStock } from '../src/api.js'
import { useScenario } from '../src/scenario.js'
import { eventually } from '../src/wait.js'

/**
 * Scenario 9, the order's deadline: shipment stops consuming; the order's deadline (4 s here) fires while its
 * StockReserved waits in shipment's queue; the order ends CANCELLED (deadline_exceeded, waiting for
 * shipment) with one refund and its stock released. Shipment comes back and handles the stale
 * StockReserved and the OrderCancelled, in whichever order its queues deliver them: no live
 * shipment is left and the books balance.
 */
describe('scenario 9: a deadline fires while shipment is away', () => {
  const s = useScenario('scenario 9 (deadline while shipment is stopped)', {
    env: { order: { ORDER_DEADLINE_MS: '4000' } },
  })

  it('when shipment stops consuming, then the deadline cancels the order, refunds it once and releases its stock', async () => {
    const inventoryUrl = s.fleet.one('inventory').url
    await setStock(inventoryUrl, 'E2E-DEADLINE', 5)
    s.ledger.stock.set('E2E-DEADLINE', 5)
    const shipment = s.fleet.one('shipment')
    await shipment.stop()

    const order = await s.place(orderBody([{ sku: 'E2E-DEADLINE', quantity: 2 }]))
    await s.awaitTerminal([order], 60_000)

    const view = await getOrder(s.fleet.one('order').url, order.id)
    expect(view).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'deadline_exceeded',
      failedStep: 'shipment',
    })
    const refunds = await eventually(
      'the capture refunded',
      async () => {
        const rows = await s.fleet.dbs!.query<{ reason: string }>(
          'payment',
          'SELECT reason FROM refunds WHERE order_id = $1',
          [order.id],
        )
        return rows.length > 0 && rows
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    )
    expect(refunds).toEqual([{ reason: 'deadline_exceeded' }])
    await eventually(
      'the stock released',
      async () => (await getStock(inventoryUrl, 'E2E-DEADLINE')).reserved === 0,
      { timeoutMs: 30_000, intervalMs: 200 },
    )
    expect(await getStock(inventoryUrl, 'E2E-DEADLINE')).toEqual(
      expect.objectContaining({ available: 5, reserved: 0 }),
    )

    await shipment.restart()
    const handled = await eventually(
      'shipment handled its stale StockReserved and the OrderCancelled',
      async () => {
        const rows = await s.fleet.dbs!.query<{ handler: string }>(
          'shipment',
          'SELECT handler FROM inbox_message ORDER BY handler',
        )
        return rows.length === 2 && rows.map((r) => r.handler)
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    )
    expect(handled).toEqual(['cancel-shipment-when-order-cancelled', 'create-shipment-when-stock-reserved'])
    const live = await s.fleet.dbs!.query('shipment', `SELECT id FROM shipment WHERE status = 'CREATED'`)
    expect(live).toEqual([])
    // A confirmation never follows: the order stays CANCELLED whatever shipment did first.
    expect((await getOrder(s.fleet.one('order').url, order.id)).status).toBe('CANCELLED')
  })

  it('when shipment caught up, then every invariant holds', async () => {
    const report = await s.invariants()
    expect(report.violations).toEqual([])
    expect(report.cancelled).toBe(1)
  })
})
