import { randomUUID } from 'node:crypto'
import { OrderConfirmed } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { confirmOrderWhenShipmentCreated } from '../src/reactions/confirm-order-when-shipment-created.js'
import { pendingOrder } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { emitted, shipmentCreated } from './support/orders.js'
import { deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'order_confirm')
const logger = memoryLogger()
const now = new Date('2026-11-29T12:00:00.000Z')
const handler = confirmOrderWhenShipmentCreated({ logger, clock: () => now })

describe('confirm-order-when-shipment-created', () => {
  it('when the shipment is created, then the order is CONFIRMED and exactly one OrderConfirmed follows OrderCreated', async () => {
    const orderId = await pendingOrder(db)
    const message = shipmentCreated(orderId, now)

    expect(await deliver(db.pool, handler, message)).toBe('handled')

    const order = await db.prisma.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { events: true },
    })
    expect(order).toMatchObject({ status: 'CONFIRMED', confirmedAt: now, cancellationReason: null })
    const outbox = await outboxOf(db.pool, orderId)
    expect(outbox.map((row) => row.type)).toEqual(['order.created.v1', 'order.confirmed.v1'])
    const confirmed = outbox[1]
    expect(OrderConfirmed.schema.parse(confirmed?.payload)).toEqual({
      orderId,
      customerId: order.customerId,
      totalAmount: 4499,
      currency: 'EUR',
      shipmentId: message.payload.shipmentId,
      confirmedAt: now.toISOString(),
    })
    expect(confirmed?.headers).toMatchObject({ correlationId: orderId, causationId: message.id })
    expect(order.events.map((event) => event.type).sort()).toEqual(
      ['order.confirmed.v1', 'order.created.v1', 'shipment.created.v1'].sort(),
    )
  })

  it('when the same ShipmentCreated is delivered twice, then the order is confirmed once', async () => {
    const orderId = await pendingOrder(db)
    const message = shipmentCreated(orderId, now)

    expect(await deliver(db.pool, handler, message)).toBe('handled')
    expect(await deliver(db.pool, handler, message)).toBe('duplicate')

    expect(await emitted(db, orderId, OrderConfirmed)).toHaveLength(1)
    expect(await db.prisma.orderEvent.count({ where: { orderId } })).toBe(3)
  })

  it('when a second ShipmentCreated arrives under a new id, then nothing more is emitted', async () => {
    const orderId = await pendingOrder(db)
    await deliver(db.pool, handler, shipmentCreated(orderId, now))

    expect(await deliver(db.pool, handler, shipmentCreated(orderId, now))).toBe('handled')

    expect(await emitted(db, orderId, OrderConfirmed)).toHaveLength(1)
    expect((await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status).toBe('CONFIRMED')
  })

  it('when the order was cancelled, then the late ShipmentCreated does not confirm it, emits nothing and is recorded as late', async () => {
    const orderId = await pendingOrder(db)
    await db.prisma.order.update({
      where: { id: orderId },
      data: {
        status: 'CANCELLED',
        cancellationReason: 'card_declined',
        failedStep: 'payment',
        cancelledAt: now,
      },
    })

    const late = shipmentCreated(orderId, now)
    expect(await deliver(db.pool, handler, late)).toBe('handled')

    expect((await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status).toBe('CANCELLED')
    expect((await outboxOf(db.pool, orderId)).map((row) => row.type)).toEqual(['order.created.v1'])
    const recorded = await db.prisma.orderEvent.findUniqueOrThrow({ where: { messageId: late.id } })
    expect(recorded.note).toBe('late: the order was already CANCELLED')
    expect(
      logger.lines.some(
        (line) => line.msg === 'order not confirmed' && JSON.stringify(line.obj).includes(orderId),
      ),
    ).toBe(true)
  })

  it('when the order is unknown here, then nothing is written and a warning is logged', async () => {
    const orderId = randomUUID()

    await deliver(db.pool, handler, shipmentCreated(orderId, now))

    expect(await outboxOf(db.pool, orderId)).toEqual([])
    expect(await db.prisma.orderEvent.count({ where: { orderId } })).toBe(0)
    expect(
      logger.lines.some((line) => line.level === 'warn' && JSON.stringify(line.obj).includes(orderId)),
    ).toBe(true)
  })
})
