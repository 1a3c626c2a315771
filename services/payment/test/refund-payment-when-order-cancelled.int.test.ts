import { OrderCreatedV2, PaymentProcessed, PaymentRefunded } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition } from '@saga/messaging'
import { consumed, deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import type { Tx } from '../src/plugins/db.js'
import { processPaymentWhenOrderCreated } from '../src/reactions/process-payment-when-order-created.js'
import { refundPaymentWhenOrderCancelled } from '../src/reactions/refund-payment-when-order-cancelled.js'
import { refundPaymentWhenShipmentFailed } from '../src/reactions/refund-payment-when-shipment-failed.js'
import { refundPaymentWhenStockReservationFailed } from '../src/reactions/refund-payment-when-stock-reservation-failed.js'
import {
  orderCancelled,
  outboxOfType,
  shipmentFailed,
  stockReservationFailed,
  useServiceTestDatabase,
} from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { orderCreated } from './support/events.js'

const db = useServiceTestDatabase(database, 'payment_cancel')
const logger = memoryLogger()
const now = new Date('2026-11-30T12:00:00.000Z')
const deps = { logger, clock: () => now }
const process = processPaymentWhenOrderCreated(deps)
const cancel = refundPaymentWhenOrderCancelled(deps)
const stockFailed = refundPaymentWhenStockReservationFailed(deps)
const refundOnShipmentFailure = refundPaymentWhenShipmentFailed(deps)

const created = (token = 'tok_visa') => {
  const payload = orderCreated(token)
  return consumed(OrderCreatedV2, payload, { correlationId: payload.orderId })
}
const cancelled = (orderId: string, reason?: string) => orderCancelled(orderId, reason, now)
const stockFailure = (orderId: string) => stockReservationFailed(orderId, [], now)
const shipmentFailure = (orderId: string) =>
  shipmentFailed(orderId, [{ sku: 'MUG-01', quantity: 2, unitPrice: 1250 }], now)

/** A failure compensation of the payment service, and a failure message for an order. */
interface Compensation {
  failure: string
  handler: HandlerDefinition<Tx, { orderId: string; reason: string }>
  message: (orderId: string) => ConsumedMessage<{ orderId: string; reason: string }>
  reason: string
}

const emitted = (orderId: string, type: string) => outboxOfType(db.pool, orderId, type)
const refunds = (orderId: string) => db.prisma.refund.findMany({ where: { orderId } })

describe('refund-payment-when-order-cancelled', () => {
  it('when a captured order is cancelled, then the capture is refunded once with the cancel reason and PaymentRefunded is emitted', async () => {
    const order = created()
    const { orderId } = order.payload
    await deliver(db.pool, process, order)
    const message = cancelled(orderId, 'deadline_exceeded')

    expect(await deliver(db.pool, cancel, message)).toBe('handled')

    const payment = await db.prisma.payment.findUniqueOrThrow({
      where: { orderId },
      include: { refund: true },
    })
    expect(payment.refund).toMatchObject({ amount: 4499n, reason: 'deadline_exceeded' })
    const facts = await emitted(orderId, PaymentRefunded.type)
    expect(facts).toHaveLength(1)
    expect(PaymentRefunded.schema.parse(facts[0]?.payload)).toMatchObject({
      orderId,
      paymentId: payment.id,
      amount: 4499,
      reason: 'deadline_exceeded',
    })
    expect(facts[0]?.headers).toMatchObject({ correlationId: orderId, causationId: message.id })
    expect(await db.prisma.cancelledOrder.findUnique({ where: { orderId } })).toMatchObject({
      reason: 'deadline_exceeded',
      cancelledAt: now,
    })
  })

  it('when OrderCancelled arrives before OrderCreated, then nothing is charged and nothing is emitted, for the cancel or the late order', async () => {
    const order = created()
    const { orderId } = order.payload

    expect(await deliver(db.pool, cancel, cancelled(orderId))).toBe('handled')
    expect(await deliver(db.pool, process, order)).toBe('handled')

    expect(await db.prisma.payment.count({ where: { orderId } })).toBe(0)
    expect(await outboxOf(db.pool, orderId)).toEqual([])
    expect(await db.prisma.cancelledOrder.count({ where: { orderId } })).toBe(1)
  })

  it('when a declined order is cancelled, then there is nothing to refund and nothing is emitted', async () => {
    const order = created('tok_chargeDeclined')
    const { orderId } = order.payload
    await deliver(db.pool, process, order)

    expect(await deliver(db.pool, cancel, cancelled(orderId, 'card_declined'))).toBe('handled')

    expect(await refunds(orderId)).toEqual([])
    expect(await emitted(orderId, PaymentRefunded.type)).toEqual([])
  })

  it('when OrderCancelled is redelivered, or sent again under a new id, then nothing changes the second time', async () => {
    const order = created()
    const { orderId } = order.payload
    await deliver(db.pool, process, order)
    const message = cancelled(orderId)

    expect(await deliver(db.pool, cancel, message)).toBe('handled')
    expect(await deliver(db.pool, cancel, message)).toBe('duplicate')
    expect(await deliver(db.pool, cancel, cancelled(orderId))).toBe('handled')

    expect(await refunds(orderId)).toHaveLength(1)
    expect(await emitted(orderId, PaymentRefunded.type)).toHaveLength(1)
    expect(await db.prisma.cancelledOrder.count({ where: { orderId } })).toBe(1)
  })

  describe.each<Compensation>([
    {
      failure: 'StockReservationFailed',
      handler: stockFailed,
      message: stockFailure,
      reason: 'out_of_stock',
    },
    {
      failure: 'ShipmentFailed',
      handler: refundOnShipmentFailure,
      message: shipmentFailure,
      reason: 'unsupported_country',
    },
  ])('with the $failure compensation', ({ handler, message, reason }) => {
    it('when the failure comes first and the cancel second, then the capture is refunded once, for the failure', async () => {
      const order = created()
      const { orderId } = order.payload
      await deliver(db.pool, process, order)

      await deliver(db.pool, handler, message(orderId))
      await deliver(db.pool, cancel, cancelled(orderId, reason))

      expect(await refunds(orderId)).toMatchObject([{ reason }])
      expect(await emitted(orderId, PaymentRefunded.type)).toHaveLength(1)
    })

    it('when the cancel comes first and the failure second, then the capture is refunded once, for the cancel', async () => {
      const order = created()
      const { orderId } = order.payload
      await deliver(db.pool, process, order)

      await deliver(db.pool, cancel, cancelled(orderId, 'customer_requested'))
      await deliver(db.pool, handler, message(orderId))

      expect(await refunds(orderId)).toMatchObject([{ reason: 'customer_requested' }])
      expect(await emitted(orderId, PaymentRefunded.type)).toHaveLength(1)
    })

    it('when the failure and the cancel arrive at the same moment, then the capture is refunded exactly once', async () => {
      const order = created()
      const { orderId } = order.payload
      await deliver(db.pool, process, order)

      await Promise.all([
        deliver(db.pool, handler, message(orderId)),
        deliver(db.pool, cancel, cancelled(orderId)),
      ])

      expect(await refunds(orderId)).toHaveLength(1)
      expect(await emitted(orderId, PaymentRefunded.type)).toHaveLength(1)
    })
  })

  it('when OrderCreated and OrderCancelled are handled at the same moment, then no capture is left unrefunded (20 orders)', async () => {
    const orders = Array.from({ length: 20 }, () => created())
    await Promise.all(
      orders.flatMap((order) => [
        deliver(db.pool, process, order),
        deliver(db.pool, cancel, cancelled(order.payload.orderId)),
      ]),
    )

    for (const { payload } of orders) {
      const payment = await db.prisma.payment.findUnique({
        where: { orderId: payload.orderId },
        include: { refund: true },
      })
      const processed = await emitted(payload.orderId, PaymentProcessed.type)
      const refunded = await emitted(payload.orderId, PaymentRefunded.type)
      // Either the cancel came first (no capture, no event) or the capture came first and was refunded.
      if (payment === null) expect([processed.length, refunded.length]).toEqual([0, 0])
      else expect([payment.refund?.amount, processed.length, refunded.length]).toEqual([4499n, 1, 1])
    }
  })
})
