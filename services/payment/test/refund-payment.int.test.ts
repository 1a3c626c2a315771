import { randomUUID } from 'node:crypto'
import { OrderCreatedV2, PaymentRefunded } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition } from '@saga/messaging'
import { describe, expect, it } from 'vitest'
import type { Tx } from '../src/plugins/db.js'
import { processPaymentWhenOrderCreated } from '../src/reactions/process-payment-when-order-created.js'
import { refundPaymentWhenShipmentFailed } from '../src/reactions/refund-payment-when-shipment-failed.js'
import { refundPaymentWhenStockReservationFailed } from '../src/reactions/refund-payment-when-stock-reservation-failed.js'
import { shipmentFailed, stockReservationFailed, useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { consumed, deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { orderCreated } from './support/events.js'

const db = useServiceTestDatabase(database, 'payment_refund')
const logger = memoryLogger()
const now = new Date('2026-11-29T12:00:00.000Z')
const deps = { logger, clock: () => now }
const process = processPaymentWhenOrderCreated(deps)
const lines = [{ sku: 'MUG-01', quantity: 2, unitPrice: 1250 }]

/** An order charged through the process reaction with `token`; returns its id. */
async function chargedOrder(token: string): Promise<string> {
  const payload = orderCreated(token)
  await deliver(db.pool, process, consumed(OrderCreatedV2, payload, { correlationId: payload.orderId }))
  return payload.orderId
}

interface Case {
  name: string
  handler: HandlerDefinition<Tx, { orderId: string; reason: string }>
  reason: string
  failure: (orderId: string) => ConsumedMessage<{ orderId: string; reason: string }>
}

const cases: Case[] = [
  {
    name: 'refund-payment-when-stock-reservation-failed',
    handler: refundPaymentWhenStockReservationFailed(deps),
    reason: 'out_of_stock',
    failure: (orderId) =>
      stockReservationFailed(orderId, [{ sku: 'MUG-01', requested: 2, available: 1 }], now),
  },
  {
    name: 'refund-payment-when-shipment-failed',
    handler: refundPaymentWhenShipmentFailed(deps),
    reason: 'unsupported_country',
    failure: (orderId) => shipmentFailed(orderId, lines, now),
  },
]

const refundsEmitted = async (orderId: string) =>
  (await outboxOf(db.pool, orderId)).filter((row) => row.type === PaymentRefunded.type)

describe.each(cases)('$name', ({ handler, reason, failure }) => {
  it('when a captured order fails later, then the capture is refunded in full and one PaymentRefunded is emitted', async () => {
    const orderId = await chargedOrder('tok_visa')
    const message = failure(orderId)

    expect(await deliver(db.pool, handler, message)).toBe('handled')

    const payment = await db.prisma.payment.findUniqueOrThrow({
      where: { orderId },
      include: { refund: true },
    })
    expect(payment.refund).toMatchObject({ amount: 4499n, currency: 'EUR', reason, orderId })
    const emitted = await refundsEmitted(orderId)
    expect(emitted).toHaveLength(1)
    expect(PaymentRefunded.schema.parse(emitted[0]?.payload)).toEqual({
      orderId,
      paymentId: payment.id,
      refundId: payment.refund?.id,
      amount: 4499,
      currency: 'EUR',
      reason,
      refundedAt: now.toISOString(),
    })
    expect(emitted[0]?.headers).toMatchObject({ correlationId: orderId, causationId: message.id })
  })

  it('when the failure is delivered twice, then the capture is refunded once', async () => {
    const orderId = await chargedOrder('tok_visa')
    const message = failure(orderId)

    expect(await deliver(db.pool, handler, message)).toBe('handled')
    expect(await deliver(db.pool, handler, message)).toBe('duplicate')

    expect(await db.prisma.refund.count({ where: { orderId } })).toBe(1)
    expect(await refundsEmitted(orderId)).toHaveLength(1)
  })

  it('when the payment was declined, then there is nothing to refund and nothing is emitted', async () => {
    const orderId = await chargedOrder('tok_chargeDeclined')

    expect(await deliver(db.pool, handler, failure(orderId))).toBe('handled')

    expect(await db.prisma.refund.count({ where: { orderId } })).toBe(0)
    expect(await refundsEmitted(orderId)).toEqual([])
  })

  it('when the order was never charged here, then there is nothing to refund and nothing is emitted', async () => {
    const orderId = randomUUID()

    expect(await deliver(db.pool, handler, failure(orderId))).toBe('handled')

    expect(await db.prisma.refund.count({ where: { orderId } })).toBe(0)
    expect(await outboxOf(db.pool, orderId)).toEqual([])
  })
})

describe('both compensations for one order', () => {
  it('when stock and shipment failures both arrive at once, then the capture is refunded exactly once', async () => {
    const orderId = await chargedOrder('tok_visa')
    const [stock, shipment] = cases
    if (!stock || !shipment) throw new Error('cases missing')

    await Promise.all([
      deliver(db.pool, stock.handler, stock.failure(orderId)),
      deliver(db.pool, shipment.handler, shipment.failure(orderId)),
    ])

    expect(await db.prisma.refund.count({ where: { orderId } })).toBe(1)
    expect(await refundsEmitted(orderId)).toHaveLength(1)
  })
})
