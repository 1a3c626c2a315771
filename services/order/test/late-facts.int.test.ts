import { OrderCancelled, OrderConfirmed, ShipmentFailed } from '@saga/contracts'
import { pgDatabase } from '@saga/messaging'
import { consumed, deliver, memoryLogger } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import { claimDueDeadlines } from '../src/deadlines/claim.js'
import { cancelByCustomer } from '../src/routes/cancel-order.js'
import { cancelOrderWhenShipmentFailed } from '../src/reactions/cancel-order-when-shipment-failed.js'
import { confirmOrderWhenShipmentCreated } from '../src/reactions/confirm-order-when-shipment-created.js'
import { pendingOrder } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { emitted, shipmentCreated } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_late')
const logger = memoryLogger()
const deps = { logger, clock: () => new Date() }
const confirm = confirmOrderWhenShipmentCreated(deps)
const shipmentFailed = cancelOrderWhenShipmentFailed(deps)

const facts = async (orderId: string) => ({
  confirmed: (await emitted(db, orderId, OrderConfirmed)).length,
  cancelled: (await emitted(db, orderId, OrderCancelled)).length,
})
const inboxHas = async (messageId: string, handler: string) =>
  (
    await db.pool.query('SELECT 1 FROM inbox_message WHERE message_id = $1 AND handler = $2', [
      messageId,
      handler,
    ])
  ).rowCount === 1

describe('late facts at the order service', () => {
  it('when ShipmentCreated arrives after the customer cancelled, then the inbox row commits, the order stays CANCELLED, nothing is emitted and the timeline marks it late', async () => {
    const orderId = await pendingOrder(db)
    expect((await cancelByCustomer(pgDatabase(db.pool), orderId, new Date())).kind).toBe('cancelled')
    const late = shipmentCreated(orderId)

    expect(await deliver(db.pool, confirm, late)).toBe('handled')

    expect(await inboxHas(late.id, confirm.name)).toBe(true)
    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'customer_requested',
      confirmedAt: null,
    })
    expect(await facts(orderId)).toEqual({ confirmed: 0, cancelled: 1 })
    const entry = await db.prisma.orderEvent.findUniqueOrThrow({ where: { messageId: late.id } })
    expect(entry.note).toBe('late: the order was already CANCELLED')
  })

  it('when ShipmentFailed arrives after the deadline cancelled the order, then the reason stays deadline_exceeded and nothing more is emitted', async () => {
    const orderId = await pendingOrder(db)
    await db.pool.query(`UPDATE orders SET deadline_at = now() - interval '1 second' WHERE id = $1`, [
      orderId,
    ])
    await pgDatabase(db.pool).transaction((tx) => claimDueDeadlines(tx, 100))
    const late = consumed(
      ShipmentFailed,
      {
        orderId,
        reason: 'unsupported_country',
        country: 'AQ',
        lines: [{ sku: 'MUG-01', quantity: 2, unitPrice: 1250 }],
        failedAt: new Date().toISOString(),
      },
      { correlationId: orderId, source: 'shipment' },
    )

    expect(await deliver(db.pool, shipmentFailed, late)).toBe('handled')

    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'deadline_exceeded',
      failedStep: 'payment',
    })
    expect(await facts(orderId)).toEqual({ confirmed: 0, cancelled: 1 })
    const entry = await db.prisma.orderEvent.findUniqueOrThrow({ where: { messageId: late.id } })
    expect(entry.note).toBe('late: the order was already CANCELLED')
  })

  it('when a confirm and a customer cancel race for one order many times, then exactly one wins each time with one status change and one outbox row', async () => {
    const outcomes = { CONFIRMED: 0, CANCELLED: 0 }
    for (let i = 0; i < 25; i++) {
      const orderId = await pendingOrder(db)
      const [delivered, cancelled] = await Promise.all([
        deliver(db.pool, confirm, shipmentCreated(orderId)),
        cancelByCustomer(pgDatabase(db.pool), orderId, new Date()),
      ])
      expect(delivered).toBe('handled')
      const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
      const emitted = await facts(orderId)
      if (order.status === 'CONFIRMED') {
        expect(cancelled.kind).toBe('confirmed')
        expect(emitted).toEqual({ confirmed: 1, cancelled: 0 })
        expect(order.cancelledAt).toBeNull()
      } else {
        expect(order.status).toBe('CANCELLED')
        expect(cancelled.kind).toBe('cancelled')
        expect(emitted).toEqual({ confirmed: 0, cancelled: 1 })
        expect(order.confirmedAt).toBeNull()
      }
      if (order.status !== 'PENDING') outcomes[order.status]++
    }
    expect(outcomes.CONFIRMED + outcomes.CANCELLED).toBe(25)
  })

  it('when a confirm and the deadline race for one order many times, then exactly one wins each time', async () => {
    for (let i = 0; i < 15; i++) {
      const orderId = await pendingOrder(db)
      await db.pool.query(`UPDATE orders SET deadline_at = now() WHERE id = $1`, [orderId])
      await Promise.all([
        deliver(db.pool, confirm, shipmentCreated(orderId)),
        pgDatabase(db.pool).transaction((tx) => claimDueDeadlines(tx, 100)),
      ])
      const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
      const emitted = await facts(orderId)
      expect(emitted.confirmed + emitted.cancelled).toBe(1)
      expect(order.status).toBe(emitted.confirmed === 1 ? 'CONFIRMED' : 'CANCELLED')
    }
  })
})
