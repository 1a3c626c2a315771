import { OrderCancelled } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition } from '@saga/messaging'
import { describe, expect, it } from 'vitest'
import type { Tx } from '../src/plugins/db.js'
import { cancelOrderWhenPaymentFailed } from '../src/reactions/cancel-order-when-payment-failed.js'
import { cancelOrderWhenShipmentFailed } from '../src/reactions/cancel-order-when-shipment-failed.js'
import { cancelOrderWhenStockReservationFailed } from '../src/reactions/cancel-order-when-stock-reservation-failed.js'
import { pendingOrder } from './support/app.js'
import { shipmentFailed, stockReservationFailed, useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { emitted, paymentFailed } from './support/orders.js'
import { deliver, memoryLogger } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'order_cancel')
const logger = memoryLogger()
const now = new Date('2026-11-29T12:00:00.000Z')
const deps = { logger, clock: () => now }
const at = now.toISOString()
const lines = [{ sku: 'MUG-01', quantity: 2, unitPrice: 1250 }]

interface Case {
  name: string
  handler: HandlerDefinition<Tx, { orderId: string; reason: string }>
  failedStep: 'payment' | 'stock' | 'shipment'
  reason: string
  message: (orderId: string) => ConsumedMessage<{ orderId: string; reason: string }>
}

const cases: Case[] = [
  {
    name: 'cancel-order-when-payment-failed',
    handler: cancelOrderWhenPaymentFailed(deps),
    failedStep: 'payment',
    reason: 'card_declined',
    message: (orderId) => paymentFailed(orderId, now),
  },
  {
    name: 'cancel-order-when-stock-reservation-failed',
    handler: cancelOrderWhenStockReservationFailed(deps),
    failedStep: 'stock',
    reason: 'out_of_stock',
    message: (orderId) =>
      stockReservationFailed(orderId, [{ sku: 'MUG-01', requested: 2, available: 0 }], now),
  },
  {
    name: 'cancel-order-when-shipment-failed',
    handler: cancelOrderWhenShipmentFailed(deps),
    failedStep: 'shipment',
    reason: 'unsupported_country',
    message: (orderId) => shipmentFailed(orderId, lines, now),
  },
]

const cancelledEvents = (orderId: string) => emitted(db, orderId, OrderCancelled)

describe.each(cases)('$name', ({ handler, failedStep, reason, message }) => {
  it('when the failure arrives for a PENDING order, then it is CANCELLED with the reason and one OrderCancelled is emitted', async () => {
    const orderId = await pendingOrder(db)
    const failure = message(orderId)

    expect(await deliver(db.pool, handler, failure)).toBe('handled')

    const order = await db.prisma.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { events: true },
    })
    expect(order).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: reason,
      failedStep,
      cancelledAt: now,
    })
    const emitted = await cancelledEvents(orderId)
    expect(emitted).toHaveLength(1)
    expect(OrderCancelled.schema.parse(emitted[0]?.payload)).toEqual({
      orderId,
      customerId: order.customerId,
      reason,
      failedStep,
      cancelledAt: at,
    })
    expect(emitted[0]?.headers).toMatchObject({ correlationId: orderId, causationId: failure.id })
    expect(order.events.map((event) => event.type).sort()).toEqual(
      ['order.cancelled.v1', 'order.created.v1', failure.type].sort(),
    )
  })

  it('when the same failure is delivered twice, then the order is cancelled once', async () => {
    const orderId = await pendingOrder(db)
    const failure = message(orderId)

    expect(await deliver(db.pool, handler, failure)).toBe('handled')
    expect(await deliver(db.pool, handler, failure)).toBe('duplicate')

    expect(await cancelledEvents(orderId)).toHaveLength(1)
  })

  it('when the order is CONFIRMED, then it is never cancelled and nothing is emitted', async () => {
    const orderId = await pendingOrder(db)
    await db.prisma.order.update({ where: { id: orderId }, data: { status: 'CONFIRMED', confirmedAt: now } })

    await deliver(db.pool, handler, message(orderId))

    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order).toMatchObject({ status: 'CONFIRMED', cancellationReason: null })
    expect(await cancelledEvents(orderId)).toEqual([])
    expect(
      logger.lines.some((line) => line.level === 'error' && JSON.stringify(line.obj).includes(orderId)),
    ).toBe(true)
  })
})

describe('two failures for one order', () => {
  it('when a second, different failure arrives, then the first reason stays and nothing more is emitted', async () => {
    const orderId = await pendingOrder(db)
    const [payment, , shipment] = cases
    if (!payment || !shipment) throw new Error('cases missing')

    await deliver(db.pool, payment.handler, payment.message(orderId))
    await deliver(db.pool, shipment.handler, shipment.message(orderId))

    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order).toMatchObject({
      status: 'CANCELLED',
      cancellationReason: 'card_declined',
      failedStep: 'payment',
    })
    expect(await cancelledEvents(orderId)).toHaveLength(1)
  })

  it('when all three failures arrive at the same moment, then the order is cancelled once, with no deadlock', async () => {
    const orderId = await pendingOrder(db)

    const outcomes = await Promise.all(cases.map((c) => deliver(db.pool, c.handler, c.message(orderId))))

    expect(outcomes).toEqual(['handled', 'handled', 'handled'])
    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order.status).toBe('CANCELLED')
    expect(cases.map((c) => c.reason)).toContain(order.cancellationReason)
    expect(await cancelledEvents(orderId)).toHaveLength(1)
    expect(await db.prisma.orderEvent.count({ where: { orderId } })).toBe(5)
  })
})
