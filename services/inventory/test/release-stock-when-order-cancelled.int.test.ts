import { StockReleased, StockReserved } from '@saga/contracts'
import { deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import { releaseStockWhenOrderCancelled } from '../src/reactions/release-stock-when-order-cancelled.js'
import { releaseStockWhenShipmentFailed } from '../src/reactions/release-stock-when-shipment-failed.js'
import { reserveStockWhenPaymentProcessed } from '../src/reactions/reserve-stock-when-payment-processed.js'
import { orderCancelled, shipmentFailed, useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { stockedOrder } from './support/events.js'

const db = useServiceTestDatabase(database, 'inventory_cancel')
const logger = memoryLogger()
const deps = { logger, clock: () => new Date() }
const reserve = reserveStockWhenPaymentProcessed(deps)
const cancel = releaseStockWhenOrderCancelled(deps)
const releaseOnFailure = releaseStockWhenShipmentFailed(deps)

/** A fresh sku with `available` units, and an order of `quantity` of them (its PaymentProcessed, not yet delivered). */
async function order(available: number, quantity: number) {
  const stocked = await stockedOrder(db.pool, { skuPrefix: 'CNL', available, quantity, unitPrice: 375 })
  const { orderId, lines } = stocked
  const cancelled = (reason?: string) => orderCancelled(orderId, reason)
  return { ...stocked, cancelled, failed: shipmentFailed(orderId, lines) }
}

const stockOf = async (sku: string) =>
  (await db.pool.query('SELECT available, reserved FROM stock WHERE sku = $1', [sku])).rows[0] as unknown
const emitted = async (orderId: string, type: string) =>
  (await outboxOf(db.pool, orderId)).filter((row) => row.type === type)

describe('release-stock-when-order-cancelled', () => {
  it('when a reserved order is cancelled, then the stock goes back and one StockReleased with the reserved lines is emitted', async () => {
    const o = await order(5, 3)
    await deliver(db.pool, reserve, o.paid)
    const message = o.cancelled('deadline_exceeded')

    expect(await deliver(db.pool, cancel, message)).toBe('handled')

    expect(await stockOf(o.sku)).toEqual({ available: 5, reserved: 0 })
    const rows = await db.prisma.reservation.findMany({ where: { orderId: o.orderId } })
    expect(rows.map((r) => [r.status, r.unitPrice])).toEqual([['RELEASED', 375]])
    const facts = await emitted(o.orderId, StockReleased.type)
    expect(facts).toHaveLength(1)
    expect(StockReleased.schema.parse(facts[0]?.payload)).toMatchObject({
      orderId: o.orderId,
      lines: o.lines,
      reason: 'deadline_exceeded',
    })
    expect(facts[0]?.headers).toMatchObject({ correlationId: o.orderId, causationId: message.id })
    expect(await db.prisma.cancelledOrder.findUnique({ where: { orderId: o.orderId } })).toMatchObject({
      reason: 'deadline_exceeded',
    })
  })

  it('when OrderCancelled arrives before PaymentProcessed, then nothing is reserved and nothing is emitted', async () => {
    const o = await order(5, 3)

    expect(await deliver(db.pool, cancel, o.cancelled())).toBe('handled')
    expect(await deliver(db.pool, reserve, o.paid)).toBe('handled')

    expect(await stockOf(o.sku)).toEqual({ available: 5, reserved: 0 })
    expect(await db.prisma.reservation.count({ where: { orderId: o.orderId } })).toBe(0)
    expect(await outboxOf(db.pool, o.orderId)).toEqual([])
  })

  it('when an order whose reservation was refused is cancelled, then nothing changes and nothing is emitted', async () => {
    const o = await order(1, 3)
    await deliver(db.pool, reserve, o.paid)

    expect(await deliver(db.pool, cancel, o.cancelled('out_of_stock'))).toBe('handled')

    expect(await stockOf(o.sku)).toEqual({ available: 1, reserved: 0 })
    expect(await emitted(o.orderId, StockReleased.type)).toEqual([])
  })

  it('when OrderCancelled is redelivered, or sent again under a new id, then nothing more is released', async () => {
    const o = await order(4, 2)
    await deliver(db.pool, reserve, o.paid)
    const message = o.cancelled()

    expect(await deliver(db.pool, cancel, message)).toBe('handled')
    expect(await deliver(db.pool, cancel, message)).toBe('duplicate')
    expect(await deliver(db.pool, cancel, o.cancelled())).toBe('handled')

    expect(await stockOf(o.sku)).toEqual({ available: 4, reserved: 0 })
    expect(await emitted(o.orderId, StockReleased.type)).toHaveLength(1)
  })

  it.each([
    { first: 'ShipmentFailed', second: 'the cancel', released: 'the failure', reason: 'unsupported_country' },
    { first: 'the cancel', second: 'ShipmentFailed', released: 'the cancel', reason: 'customer_requested' },
  ])(
    'when $first comes first and $second second, then the stock is released once, for $released',
    async ({ first, reason }) => {
      const o = await order(4, 2)
      await deliver(db.pool, reserve, o.paid)
      const failure = () => deliver(db.pool, releaseOnFailure, o.failed)
      const cancelling = () => deliver(db.pool, cancel, o.cancelled(reason))

      for (const step of first === 'ShipmentFailed' ? [failure, cancelling] : [cancelling, failure])
        await step()

      expect(await stockOf(o.sku)).toEqual({ available: 4, reserved: 0 })
      const facts = await emitted(o.orderId, StockReleased.type)
      expect(facts.map((f) => StockReleased.schema.parse(f.payload).reason)).toEqual([reason])
    },
  )

  it('when ShipmentFailed and the cancel arrive at the same moment, then the stock is released exactly once', async () => {
    const o = await order(4, 2)
    await deliver(db.pool, reserve, o.paid)

    await Promise.all([deliver(db.pool, releaseOnFailure, o.failed), deliver(db.pool, cancel, o.cancelled())])

    expect(await stockOf(o.sku)).toEqual({ available: 4, reserved: 0 })
    expect(await emitted(o.orderId, StockReleased.type)).toHaveLength(1)
  })

  it('when PaymentProcessed and OrderCancelled are handled at the same moment, then no stock stays held (20 orders)', async () => {
    const orders = await Promise.all(Array.from({ length: 20 }, () => order(3, 2)))
    await Promise.all(
      orders.flatMap((o) => [deliver(db.pool, reserve, o.paid), deliver(db.pool, cancel, o.cancelled())]),
    )

    for (const o of orders) {
      expect(await stockOf(o.sku)).toEqual({ available: 3, reserved: 0 })
      const reserved = await emitted(o.orderId, StockReserved.type)
      const released = await emitted(o.orderId, StockReleased.type)
      // Either the cancel came first (nothing reserved, nothing emitted) or the reservation was released.
      expect(released.length).toBe(reserved.length)
    }
  })
})
