import amqp from 'amqplib'
import { describe, expect, it } from 'vitest'
import { orderBody, setStock } from '../../src/api.js'
import { sumMetric } from '../../src/metrics.js'
import { payments } from '../../src/payments.js'
import { infra, SERVICES } from '../../src/run.js'
import type { Scenario } from '../../src/scenario.js'
import { eventually } from '../../src/wait.js'

const DUPLICATES = 'saga_messaging_consumer_duplicates_total'

/** Scenario 5: copies of already-handled messages published straight to the exchange change nothing. */
export function duplicateMessages(s: Scenario): void {
  describe('scenario 5: duplicate messages', () => {
    /** Everything a duplicate could change, as one comparable value. */
    const state = async () => {
      const dbs = s.fleet.dbs!
      const q = async (service: (typeof SERVICES)[number], sql: string) =>
        JSON.stringify(await dbs.query(service, sql))
      return {
        orders: await q('order', `SELECT id, status, cancellation_reason FROM orders ORDER BY id`),
        payments: JSON.stringify(await payments(dbs)),
        stock: await q('inventory', `SELECT sku, available, reserved FROM stock ORDER BY sku`),
        reservations: await q('inventory', `SELECT order_id, line_no, status FROM reservation ORDER BY 1, 2`),
        shipments: await q('shipment', `SELECT order_id, tracking_number FROM shipment ORDER BY 1`),
        outbox: await Promise.all(SERVICES.map((svc) => q(svc, `SELECT id FROM outbox_message ORDER BY id`))),
      }
    }

    it('when copies of every handled message are published again, then no state changes and each copy is recognised as a duplicate', async () => {
      await setStock(s.fleet.one('inventory').url, 'E2E-DUP', 3)
      s.ledger.stock.set('E2E-DUP', 3)
      const orders = [
        await s.place(orderBody([{ sku: 'E2E-DUP', quantity: 1 }])),
        await s.place(orderBody([{ sku: 'E2E-DUP', quantity: 1 }], { paymentMethod: 'tok_chargeDeclined' })),
        await s.place(orderBody([{ sku: 'E2E-DUP', quantity: 5 }])),
        await s.place(orderBody([{ sku: 'E2E-DUP', quantity: 1 }], { country: 'AQ' })),
      ]
      await s.awaitTerminal(orders)
      // Let compensations finish too, so "before" is a settled state.
      const settled = await s.invariants()
      expect(settled.violations).toEqual([])

      const before = await state()
      const originals = s.fleet.tap!.messages.filter((m) => orders.some((o) => o.id === m.correlationId))
      // Each copy is a duplicate for every handler that already recorded its id in an inbox.
      let expectedDuplicates = 0
      for (const svc of SERVICES) {
        const rows = await s.fleet.dbs!.query<{ n: string }>(
          svc,
          `SELECT count(*) n FROM inbox_message WHERE message_id = ANY($1::uuid[])`,
          [originals.map((m) => m.messageId)],
        )
        expectedDuplicates += Number(rows[0]?.n ?? 0)
      }
      const duplicatesBefore = await sumMetric(s.fleet, DUPLICATES)

      const connection = await amqp.connect(infra.amqpUrl)
      try {
        const channel = await connection.createConfirmChannel()
        for (const m of originals) {
          channel.publish(s.fleet.names.exchange, m.routingKey, Buffer.from(JSON.stringify(m.body)), {
            messageId: m.messageId,
            type: m.type,
            correlationId: m.correlationId,
            appId: m.appId,
            contentType: 'application/json',
            persistent: true,
          })
          s.ledger.inject(m.messageId!)
        }
        await channel.waitForConfirms()
      } finally {
        await connection.close()
      }

      await eventually(
        `${expectedDuplicates} duplicates recognised`,
        async () => (await sumMetric(s.fleet, DUPLICATES)) - duplicatesBefore >= expectedDuplicates,
        { timeoutMs: 30_000, intervalMs: 200 },
      )
      expect(await state()).toEqual(before)
      process.stdout.write(
        `[e2e] scenario 5: ${originals.length} copies published, ${expectedDuplicates} duplicate deliveries skipped\n`,
      )
    })

    it('when the duplicates are absorbed, then every invariant holds', async () => {
      const report = await s.invariants()
      expect(report.violations).toEqual([])
    })
  })
}
