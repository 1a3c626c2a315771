import { randomUUID } from 'node:crypto'
import { OrderCreatedV2, PaymentFailed, PaymentProcessed } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { processPaymentWhenOrderCreated } from '../src/reactions/process-payment-when-order-created.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { consumed, deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { orderCreated } from './support/events.js'

const db = useServiceTestDatabase(database, 'payment_process')
const logger = memoryLogger()
const now = new Date('2026-11-29T12:00:00.000Z')
const handler = processPaymentWhenOrderCreated({ logger, clock: () => now })

const created = (paymentMethod: string) => {
  const payload = orderCreated(paymentMethod)
  return consumed(OrderCreatedV2, payload, { correlationId: payload.orderId, source: 'order' })
}

describe('process-payment-when-order-created', () => {
  it('when the card is tok_visa, then the total is CAPTURED and one PaymentProcessed carries lines and address on', async () => {
    const message = created('tok_visa')
    const order = message.payload

    expect(await deliver(db.pool, handler, message)).toBe('handled')

    const payments = await db.prisma.payment.findMany({ where: { orderId: order.orderId } })
    expect(payments).toHaveLength(1)
    expect(payments[0]).toMatchObject({
      status: 'CAPTURED',
      amount: 4499n,
      currency: 'EUR',
      declineReason: null,
    })
    const outbox = await outboxOf(db.pool, order.orderId)
    expect(outbox.map((row) => row.type)).toEqual([PaymentProcessed.type])
    expect(PaymentProcessed.schema.parse(outbox[0]?.payload)).toEqual({
      orderId: order.orderId,
      customerId: order.customerId,
      paymentId: payments[0]?.id,
      amount: 4499,
      currency: 'EUR',
      lines: order.lines,
      shippingAddress: order.shippingAddress,
      processedAt: now.toISOString(),
    })
    expect(outbox[0]?.headers).toMatchObject({ correlationId: order.orderId, causationId: message.id })
  })

  it.each([
    ['tok_chargeDeclined', 'card_declined'],
    ['tok_insufficientFunds', 'insufficient_funds'],
    ['tok_unknownToken', 'invalid_payment_method'],
  ])(
    'when the card is %s, then the payment is DECLINED (%s) and one PaymentFailed is emitted',
    async (token, reason) => {
      const message = created(token)
      const { orderId } = message.payload

      await deliver(db.pool, handler, message)

      const payment = await db.prisma.payment.findUniqueOrThrow({ where: { orderId } })
      expect(payment).toMatchObject({ status: 'DECLINED', declineReason: reason, amount: 4499n })
      const outbox = await outboxOf(db.pool, orderId)
      expect(outbox.map((row) => row.type)).toEqual([PaymentFailed.type])
      expect(PaymentFailed.schema.parse(outbox[0]?.payload)).toMatchObject({
        orderId,
        paymentId: payment.id,
        amount: 4499,
        currency: 'EUR',
        reason,
        failedAt: now.toISOString(),
      })
    },
  )

  it('when the largest possible order arrives, then it is stored exactly and declined as amount_too_large', async () => {
    const base = orderCreated('tok_visa')
    const lines = Array.from({ length: 100 }, (_, i) => ({
      sku: `BIG-${i}`,
      quantity: 1_000,
      unitPrice: 100_000_000,
    }))
    const payload = { ...base, lines, total: { ...base.total, amount: 10_000_000_000_000 } }
    const message = consumed(OrderCreatedV2, payload, { correlationId: base.orderId })

    await deliver(db.pool, handler, message)

    const payment = await db.prisma.payment.findUniqueOrThrow({ where: { orderId: base.orderId } })
    expect(payment).toMatchObject({
      status: 'DECLINED',
      declineReason: 'amount_too_large',
      amount: 10_000_000_000_000n,
    })
    const outbox = await outboxOf(db.pool, base.orderId)
    expect(PaymentFailed.schema.parse(outbox[0]?.payload)).toMatchObject({
      amount: 10_000_000_000_000,
      reason: 'amount_too_large',
    })
  })

  it('when the same OrderCreated is delivered twice, then the order is charged once', async () => {
    const message = created('tok_visa')

    expect(await deliver(db.pool, handler, message)).toBe('handled')
    expect(await deliver(db.pool, handler, message)).toBe('duplicate')

    expect(await db.prisma.payment.count({ where: { orderId: message.payload.orderId } })).toBe(1)
    expect(await outboxOf(db.pool, message.payload.orderId)).toHaveLength(1)
  })

  it('when an OrderCreated for a paid order arrives under a new message id, then it is not charged again', async () => {
    const message = created('tok_visa')
    await deliver(db.pool, handler, message)

    expect(await deliver(db.pool, handler, { ...message, id: randomUUID() })).toBe('handled')

    expect(await db.prisma.payment.count({ where: { orderId: message.payload.orderId } })).toBe(1)
    expect(await outboxOf(db.pool, message.payload.orderId)).toHaveLength(1)
    expect(
      logger.lines.some(
        (line) => line.level === 'warn' && JSON.stringify(line.obj).includes(message.payload.orderId),
      ),
    ).toBe(true)
  })
})
