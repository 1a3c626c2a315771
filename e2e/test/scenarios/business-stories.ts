import { execFileSync } from 'node:child_process'
import { allEvents, sagaFacts } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { getOrder, getStock, orderBody, orderTotal, setStock, type PlaceOrder } from '../../src/api.js'
import { orderCli } from '../../src/cli.js'
import type { PlacedOrder } from '../../src/ledger.js'
import type { Scenario } from '../../src/scenario.js'

/** Scenario 1: the four business stories, each checked in all four databases and on the exchange. */
export function businessStories(s: Scenario): void {
  describe('scenario 1: the four business stories', () => {
    /** The orders of these stories, placed through `place` or the CLI. */
    const mine: PlacedOrder[] = []
    const place = async (body: PlaceOrder) => {
      const order = await s.place(body)
      mine.push(order)
      return order
    }
    const chainOf = (orderId: string): string[] => s.fleet.tap!.chain(orderId).map((m) => m.routingKey)
    const countIn = async (service: 'payment' | 'inventory' | 'shipment', sql: string, ...params: string[]) =>
      Number((await s.fleet.dbs!.query<{ n: string }>(service, sql, params))[0]?.n ?? 0)
    /** The order's reservations in inventory: all of them, or those in `status`. */
    const reservationsOf = (orderId: string, status?: 'RESERVED' | 'RELEASED') =>
      status === undefined
        ? countIn('inventory', `SELECT count(*) n FROM reservation WHERE order_id = $1`, orderId)
        : countIn(
            'inventory',
            `SELECT count(*) n FROM reservation WHERE order_id = $1 AND status = $2`,
            orderId,
            status,
          )
    const shipmentsOf = (orderId: string) =>
      countIn('shipment', `SELECT count(*) n FROM shipment WHERE order_id = $1`, orderId)

    it('when a paid order for stock on hand ships to a supported country, then it is CONFIRMED with one capture, reservation and shipment', async () => {
      const inventory = s.fleet.one('inventory').url
      await setStock(inventory, 'E2E-MUG', 10)
      s.ledger.stock.set('E2E-MUG', 10)
      const body = orderBody([{ sku: 'E2E-MUG', quantity: 2, unitPrice: 1250 }])
      const order = await place(body)
      await s.awaitTerminal([order])

      const view = await getOrder(s.fleet.one('order').url, order.id)
      expect(view.status).toBe('CONFIRMED')
      expect(chainOf(order.id)).toEqual(sagaFacts())
      expect(await getStock(inventory, 'E2E-MUG')).toMatchObject({ available: 8, reserved: 2 })
      expect(await reservationsOf(order.id, 'RESERVED')).toBe(1)
      expect(await shipmentsOf(order.id)).toBe(1)
      const captured = s.fleet.tap!.chain(order.id).find((m) => m.routingKey === 'payment.processed')
      expect((captured?.body as { data?: { amount?: number } }).data?.amount).toBe(orderTotal(body))
    })

    it('when the card is declined, then the order is CANCELLED with nothing captured, reserved or shipped', async () => {
      const inventory = s.fleet.one('inventory').url
      await setStock(inventory, 'E2E-PEN', 5)
      s.ledger.stock.set('E2E-PEN', 5)
      const order = await place(
        orderBody([{ sku: 'E2E-PEN', quantity: 1 }], { paymentMethod: 'tok_chargeDeclined' }),
      )
      await s.awaitTerminal([order])

      const view = await getOrder(s.fleet.one('order').url, order.id)
      expect(view.status).toBe('CANCELLED')
      expect(chainOf(order.id)).toEqual(sagaFacts('payment'))
      expect(await getStock(inventory, 'E2E-PEN')).toMatchObject({ available: 5, reserved: 0 })
      expect(await reservationsOf(order.id)).toBe(0)
      expect(await shipmentsOf(order.id)).toBe(0)
    })

    it('when the stock is short, then the order is CANCELLED, the capture refunded once and the stock unchanged', async () => {
      const inventory = s.fleet.one('inventory').url
      await setStock(inventory, 'E2E-LAMP', 1)
      s.ledger.stock.set('E2E-LAMP', 1)
      const order = await place(orderBody([{ sku: 'E2E-LAMP', quantity: 2 }]))
      await s.awaitTerminal([order])

      expect((await getOrder(s.fleet.one('order').url, order.id)).status).toBe('CANCELLED')
      // The refund is a compensation that may land just after the cancellation.
      await s.fleet.tap!.waitFor(
        (m) => m.correlationId === order.id && m.routingKey === 'payment.refunded',
        10_000,
      )
      expect(chainOf(order.id).sort()).toEqual(sagaFacts('stock').sort())
      expect(await getStock(inventory, 'E2E-LAMP')).toMatchObject({ available: 1, reserved: 0 })
      expect(await shipmentsOf(order.id)).toBe(0)
    })

    it('when the country is not served by the carrier, then the order is CANCELLED, the stock released and the capture refunded', async () => {
      const inventory = s.fleet.one('inventory').url
      await setStock(inventory, 'E2E-GLOBE', 3)
      s.ledger.stock.set('E2E-GLOBE', 3)
      const order = await place(orderBody([{ sku: 'E2E-GLOBE', quantity: 1 }], { country: 'AQ' }))
      await s.awaitTerminal([order])

      expect((await getOrder(s.fleet.one('order').url, order.id)).status).toBe('CANCELLED')
      for (const key of ['payment.refunded', 'stock.released']) {
        await s.fleet.tap!.waitFor((m) => m.correlationId === order.id && m.routingKey === key, 10_000)
      }
      expect(chainOf(order.id).sort()).toEqual(sagaFacts('shipment').sort())
      expect(await getStock(inventory, 'E2E-GLOBE')).toMatchObject({ available: 3, reserved: 0 })
      expect(await reservationsOf(order.id, 'RELEASED')).toBe(1)
      expect(await shipmentsOf(order.id)).toBe(0)
    })

    it('when an order is placed with the CLI and --follow, then it prints every step live and the final status', async () => {
      const output = await orderCli(s.fleet, [
        'place',
        '--sku',
        'E2E-MUG',
        '--qty',
        '1',
        '--price',
        '990',
        '--follow',
      ])
      const id = /order ([0-9a-f-]{36}) placed/.exec(output)?.[1]
      expect(id).toBeDefined()
      mine.push(
        s.ledger.add({
          id: id!,
          body: orderBody([{ sku: 'E2E-MUG', quantity: 1, unitPrice: 990 }]),
          sentAt: Date.now(),
        }),
      )
      for (const type of [
        'order.created.v1',
        'payment.processed.v1',
        'stock.reserved.v1',
        'shipment.created.v1',
        'order.confirmed.v1',
      ]) {
        expect(output).toMatch(
          new RegExp(`\\+\\s*\\d+ ms\\s+${type.replaceAll('.', '\\.')}\\s+\\w+\\s+[0-9a-f-]{36}`),
        )
      }
      expect(output).toContain('final status: CONFIRMED')
      // The same chain again, from the outboxes, for an order that is already final.
      const replay = await orderCli(s.fleet, ['follow', id!])
      expect(replay.match(/^\s+\+/gm)).toHaveLength(5)
      process.stdout.write(
        `[e2e] scenario 1: npm run order -- place --sku E2E-MUG --qty 1 --follow\n${output}`,
      )
    })

    // The relay publishes with `mandatory`: an event no queue takes is returned, retried and parked,
    // and the tap (bound to `#`) would hide that here. So the services' own bindings are checked.
    it('when the fleet is up, then every event of the chain is bound to some service queue, the tap aside', () => {
      const listed = execFileSync(
        'rabbitmqctl',
        ['list_bindings', '-q', '--no-table-headers', 'source_name', 'routing_key', 'destination_name'],
        { encoding: 'utf8' },
      )
      const bound = new Set(
        listed
          .split('\n')
          .map((line) => line.split('\t'))
          .filter(([source, , queue]) => source === s.fleet.names.exchange && queue !== s.fleet.tap!.queue)
          .map(([, routingKey]) => routingKey),
      )
      expect(allEvents.map((event) => event.routingKey).filter((key) => !bound.has(key))).toEqual([])
    })

    it('when the stories are over, then every invariant holds', async () => {
      const report = await s.invariants()
      expect(report.violations).toEqual([])
      expect(await s.statusesOf(mine)).toEqual({ CONFIRMED: 2, CANCELLED: 3 })
    })
  })
}
