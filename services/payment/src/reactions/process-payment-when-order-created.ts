import { randomUUID } from 'node:crypto'
import { OrderCreated, PaymentFailed, PaymentProcessed } from '@saga/contracts'
import { enqueue, type HandlerDefinition } from '@saga/messaging'
import { charge } from '../domain/provider.js'
import type { Tx } from '../plugins/db.js'
import { clock, type ReactionDeps } from './deps.js'
import { followUp } from './follow-up.js'

/**
 * Charges the order's total with its payment method at the simulated provider (rules in
 * domain/provider.ts) and stores the payment, CAPTURED or DECLINED, with PaymentProcessed (which
 * carries lines and address on to inventory and shipment) or PaymentFailed. One payment per order:
 * the unique order id makes a second OrderCreated for the same order (a re-sent event under a new
 * message id) a no-op instead of a second charge.
 */
export function processPaymentWhenOrderCreated(deps: ReactionDeps): HandlerDefinition<Tx, OrderCreated> {
  return {
    name: 'process-payment-when-order-created',
    message: OrderCreated,
    async handle(message, tx) {
      const order = message.payload
      const { orderId } = order
      const paymentId = randomUUID()
      const now = clock(deps)
      const log = { orderId, paymentId, messageId: message.id, correlationId: message.correlationId }
      const outcome = charge({
        paymentMethod: order.paymentMethod,
        amount: order.totalAmount,
        currency: order.currency,
      })
      const declineReason = outcome.outcome === 'declined' ? outcome.reason : null
      const inserted = await tx.$executeRaw`
        INSERT INTO payments (id, order_id, customer_id, status, amount, currency, payment_method, decline_reason, created_at)
        VALUES (${paymentId}::uuid, ${orderId}::uuid, ${order.customerId}::uuid,
                ${outcome.outcome === 'captured' ? 'CAPTURED' : 'DECLINED'}::"PaymentStatus", ${order.totalAmount},
                ${order.currency}, ${order.paymentMethod}, ${declineReason}, ${now})
        ON CONFLICT (order_id) DO NOTHING`
      if (inserted === 0) {
        deps.logger.warn(log, 'order already has a payment; not charged again')
        return
      }
      const common = {
        orderId,
        customerId: order.customerId,
        paymentId,
        amount: order.totalAmount,
        currency: order.currency,
      }
      if (outcome.outcome === 'captured') {
        const payload = {
          ...common,
          lines: order.lines,
          shippingAddress: order.shippingAddress,
          processedAt: now.toISOString(),
        }
        await enqueue(tx, followUp(message, PaymentProcessed, orderId, payload, now))
        deps.logger.info({ ...log, amount: order.totalAmount, currency: order.currency }, 'payment captured')
        return
      }
      const payload = {
        ...common,
        reason: outcome.reason,
        message: outcome.message,
        failedAt: now.toISOString(),
      }
      await enqueue(tx, followUp(message, PaymentFailed, orderId, payload, now))
      deps.logger.info({ ...log, reason: outcome.reason }, 'payment declined')
    },
  }
}
