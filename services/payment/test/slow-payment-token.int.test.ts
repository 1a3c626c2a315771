import { randomUUID } from 'node:crypto'
import { OrderCancelled, OrderCreatedV2, PaymentProcessed } from '@saga/contracts'
import { consumed, deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import { processPaymentWhenOrderCreated } from '../src/reactions/process-payment-when-order-created.js'
import { refundPaymentWhenOrderCancelled } from '../src/reactions/refund-payment-when-order-cancelled.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { orderCreated } from './support/events.js'

const db = useServiceTestDatabase(database, 'payment_slow')
const now = new Date('2026-12-01T12:00:00.000Z')
const deps = { logger: memoryLogger(), clock: () => now }
const DELAY_MS = 1_500
const charge = processPaymentWhenOrderCreated(deps, { slowTokenDelayMs: DELAY_MS })
const cancel = refundPaymentWhenOrderCancelled(deps)

const created = () => {
  const payload = orderCreated('tok_slow')
  return consumed(OrderCreatedV2, payload, { correlationId: payload.orderId, source: 'order' })
}

describe('the tok_slow payment token', () => {
  it('when an order pays with tok_slow, then it is captured after the delay and PaymentProcessed follows', async () => {
    const message = created()
    const started = performance.now()

    expect(await deliver(db.pool, charge, message)).toBe('handled')

    expect(performance.now() - started).toBeGreaterThanOrEqual(DELAY_MS)
    const payment = await db.prisma.payment.findUniqueOrThrow({ where: { orderId: message.payload.orderId } })
    expect(payment).toMatchObject({ status: 'CAPTURED', paymentMethod: 'tok_slow' })
    expect((await outboxOf(db.pool, message.payload.orderId)).map((r) => r.type)).toEqual([
      PaymentProcessed.type,
    ])
  })

  it('when the order is cancelled while its tok_slow charge waits, then the cancel is handled meanwhile and nothing is charged', async () => {
    const message = created()
    const { orderId } = message.payload
    const finished: string[] = []

    const charging = deliver(db.pool, charge, message).finally(() => finished.push('charge'))
    const cancelling = deliver(
      db.pool,
      cancel,
      consumed(
        OrderCancelled,
        { orderId, customerId: randomUUID(), reason: 'customer_requested', cancelledAt: now.toISOString() },
        { correlationId: orderId, source: 'order' },
      ),
    ).finally(() => finished.push('cancel'))

    expect(await Promise.all([charging, cancelling])).toEqual(['handled', 'handled'])
    // The cancel did not wait for the slow charge: it committed while the provider was still "thinking".
    expect(finished).toEqual(['cancel', 'charge'])
    expect(await db.prisma.payment.count({ where: { orderId } })).toBe(0)
    expect(await outboxOf(db.pool, orderId)).toEqual([])
  })
})
