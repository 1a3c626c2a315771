import { randomUUID } from 'node:crypto'
import amqp from 'amqplib'
import { describe, expect, it } from 'vitest'
import { orderBody, setStock } from '../../src/api.js'
import { orderCli } from '../../src/cli.js'
import { infra } from '../../src/run.js'
import type { Scenario } from '../../src/scenario.js'
import { eventually } from '../../src/wait.js'

/** The shipment handler's queue and its dead-letter queue (topology: `<prefix>.<handler>`, `.dlq`). */
const HANDLER = 'create-shipment-when-stock-reserved'

/** Scenario 6: poison messages are dead-lettered with the reason, shown by the CLI, and nothing stops. */
export function poisonMessages(s: Scenario): void {
  describe('scenario 6: poison messages', () => {
    it('when a malformed message and an older event version without an upcaster reach a queue, then both are dead-lettered with the reason and listed by the CLI', async () => {
      const queue = `${s.fleet.names.queuePrefix.shipment}.${HANDLER}`
      const malformedId = randomUUID()
      const unknownVersionId = randomUUID()
      const orderId = randomUUID()
      const connection = await amqp.connect(infra.amqpUrl)
      try {
        const channel = await connection.createConfirmChannel()
        channel.sendToQueue(queue, Buffer.from('{"specversion":"1.0", this is not json'), {
          messageId: malformedId,
          type: 'stock.reserved.v1',
          correlationId: orderId,
          contentType: 'application/json',
          persistent: true,
        })
        const envelope = {
          specversion: '1.0',
          id: unknownVersionId,
          source: 'inventory',
          type: 'stock.reserved.v0',
          time: new Date().toISOString(),
          subject: orderId,
          datacontenttype: 'application/json',
          correlationid: orderId,
          // Older than the handler's v1, which has no upcaster from it (a newer version would be held).
          data: { orderId, somethingOld: true },
        }
        channel.sendToQueue(queue, Buffer.from(JSON.stringify(envelope)), {
          messageId: unknownVersionId,
          type: 'stock.reserved.v0',
          correlationId: orderId,
          contentType: 'application/json',
          persistent: true,
        })
        await channel.waitForConfirms()
        await eventually(
          'both poison messages in the dead-letter queue',
          async () => (await channel.checkQueue(`${queue}.dlq`)).messageCount === 2,
          { timeoutMs: 20_000, intervalMs: 200 },
        )
      } finally {
        await connection.close()
      }

      const listing = await orderCli(s.fleet, ['dlq', 'list'])
      expect(listing).toContain(malformedId)
      expect(listing).toContain(unknownVersionId)
      expect(listing).toMatch(/stock\.reserved\.v0/)
      expect(listing.match(/reason: \S+/g)?.length).toBe(2)

      const where = await orderCli(s.fleet, ['where', orderId])
      expect(where).toContain(unknownVersionId)

      // Requeued, poison is still poison: it goes back to its handler and is dead-lettered again.
      const requeued = await orderCli(s.fleet, ['dlq', 'requeue', unknownVersionId])
      expect(requeued).toContain('1 message(s) requeued')
      const again = await amqp.connect(infra.amqpUrl)
      try {
        const channel = await again.createChannel()
        await eventually(
          'the requeued poison dead-lettered again',
          async () => {
            const listed = await orderCli(s.fleet, ['dlq', 'list'])
            return (
              listed.includes(unknownVersionId) &&
              (await channel.checkQueue(`${queue}.dlq`)).messageCount === 2
            )
          },
          { timeoutMs: 20_000, intervalMs: 500 },
        )
      } finally {
        await again.close()
      }
      expect(await orderCli(s.fleet, ['parked', 'list'])).toContain('no parked outbox rows')
    })

    it('when poison sat in a queue, then the fleet keeps processing orders', async () => {
      await setStock(s.fleet.one('inventory').url, 'E2E-POISON', 5)
      s.ledger.stock.set('E2E-POISON', 5)
      const order = await s.place(orderBody([{ sku: 'E2E-POISON', quantity: 1 }]))
      await s.awaitTerminal([order])
      const chain = s.fleet.tap!.chain(order.id).map((m) => m.routingKey)
      expect(chain).toContain('order.confirmed')
    })

    it('when the poison is dealt with, then every invariant holds', async () => {
      const report = await s.invariants()
      expect(report.violations).toEqual([])
    })
  })
}
