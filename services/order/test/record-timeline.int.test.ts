import { randomUUID } from 'node:crypto'
import { PaymentProcessed, PaymentRefunded, StockReleased, StockReserved } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { orderReactions, timelineRecorder } from '../src/reactions/index.js'
import { pendingOrder } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { consumed, memoryLogger, outboxOf } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'order_timeline')
const logger = memoryLogger()
const lines = [{ sku: 'MUG-01', quantity: 2, unitPrice: 1250 }]
const shippingAddress = {
  name: 'Ana Lima',
  line1: 'Rua 1',
  city: 'Porto',
  postalCode: '4000-001',
  country: 'PT' as const,
}

describe('record-timeline (batch recorder)', () => {
  it('when the order service is listed, then each event type of the chain it consumes has exactly one handler or the recorder', () => {
    const handlers = orderReactions({ logger, clock: () => new Date() })
    expect(new Set(handlers.map((handler) => handler.name)).size).toBe(handlers.length)
    const recorded = timelineRecorder({ logger, clock: () => new Date() }).messages.map(
      (contract) => contract.type,
    )
    expect([...handlers.map((handler) => handler.message.type), ...recorded].sort()).toEqual(
      [
        'order.cancelled.v1',
        'order.confirmed.v1',
        'payment.failed.v1',
        'payment.processed.v1',
        'payment.refunded.v1',
        'shipment.cancelled.v1',
        'shipment.created.v1',
        'shipment.failed.v1',
        'stock.released.v1',
        'stock.reservation-failed.v1',
        'stock.reserved.v1',
      ].sort(),
    )
  })

  it("when the other services' events arrive in one batch and again, then each is in the timeline once, in time order, and nothing is emitted", async () => {
    const orderId = await pendingOrder(db)
    const t = (seconds: number) => new Date(Date.UTC(2026, 10, 29, 12, 0, seconds))
    const paymentId = randomUUID()
    const customerId = randomUUID()
    const processed = consumed(
      PaymentProcessed,
      {
        orderId,
        customerId,
        paymentId,
        amount: 2500,
        currency: 'EUR',
        lines,
        shippingAddress,
        processedAt: t(1).toISOString(),
      },
      { correlationId: orderId, source: 'payment', time: t(1) },
    )
    const reserved = consumed(
      StockReserved,
      { orderId, customerId, lines, shippingAddress, reservedAt: t(2).toISOString() },
      { correlationId: orderId, source: 'inventory', time: t(2) },
    )
    const released = consumed(
      StockReleased,
      { orderId, lines, reason: 'unsupported_country', releasedAt: t(4).toISOString() },
      { correlationId: orderId, source: 'inventory', time: t(4) },
    )
    const refunded = consumed(
      PaymentRefunded,
      {
        orderId,
        paymentId,
        refundId: randomUUID(),
        amount: 2500,
        currency: 'EUR',
        reason: 'unsupported_country',
        refundedAt: t(3).toISOString(),
      },
      { correlationId: orderId, source: 'payment', time: t(3) },
    )

    const quiet = memoryLogger()
    const recorder = timelineRecorder({ logger: quiet, clock: () => new Date() })
    // A redelivery may come in the same batch as the original, or in a later one.
    await recorder.record([processed, reserved, released, processed], db.pool)
    await recorder.record([refunded, reserved, released], db.pool)
    // Redeliveries are not events of an unknown order.
    expect(quiet.lines.filter((line) => line.level === 'warn')).toEqual([])

    const events = await db.prisma.orderEvent.findMany({
      where: { orderId, source: { not: 'order' } },
      orderBy: { occurredAt: 'asc' },
    })
    expect(events.map((event) => [event.type, event.source])).toEqual([
      ['payment.processed.v1', 'payment'],
      ['stock.reserved.v1', 'inventory'],
      ['payment.refunded.v1', 'payment'],
      ['stock.released.v1', 'inventory'],
    ])
    expect((await outboxOf(db.pool, orderId)).map((row) => row.type)).toEqual(['order.created.v1'])
  })

  it('when an event names an unknown order, then nothing is recorded and a warning is logged', async () => {
    // In upper case, as a producer may write a uuid; PostgreSQL answers in lower case.
    const orderId = randomUUID().toUpperCase()
    const message = consumed(
      StockReleased,
      { orderId, lines, reason: 'unsupported_country', releasedAt: new Date().toISOString() },
      { correlationId: orderId },
    )

    const known = consumed(
      StockReleased,
      {
        orderId: await pendingOrder(db),
        lines,
        reason: 'unsupported_country',
        releasedAt: new Date().toISOString(),
      },
      { correlationId: orderId },
    )
    const upperId = (await pendingOrder(db)).toUpperCase()
    const upper = consumed(
      StockReleased,
      { orderId: upperId, lines, reason: 'unsupported_country', releasedAt: new Date().toISOString() },
      { correlationId: upperId },
    )
    await timelineRecorder({ logger, clock: () => new Date() }).record([message, known, upper], db.pool)

    expect(await db.prisma.orderEvent.count({ where: { orderId } })).toBe(0)
    expect(await db.prisma.orderEvent.count({ where: { messageId: known.id } })).toBe(1)
    expect(await db.prisma.orderEvent.count({ where: { messageId: upper.id } })).toBe(1)
    const warned = logger.lines
      .filter((line) => line.level === 'warn')
      .map((line) => JSON.stringify(line.obj).toLowerCase())
    expect(warned.filter((line) => line.includes(orderId.toLowerCase()))).toHaveLength(1)
    expect(warned.filter((line) => line.includes(known.payload.orderId))).toEqual([])
    expect(warned.filter((line) => line.includes(upperId.toLowerCase()))).toEqual([])
  })
})
