import { randomUUID } from 'node:crypto'
import { OrderCreated, PaymentFailed, PaymentProcessed } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import { charge } from '../domain/provider.js'
import type { Tx } from '../plugins/db.js'
import { cancellations, savePayment } from '../store.js'

/**
 * Charges the order's total with its payment method at the simulated provider (rules in
 * domain/provider.ts) and stores the payment, CAPTURED or DECLINED, with PaymentProcessed (which
 * carries lines and address on to inventory and shipment) or PaymentFailed. One payment per order:
 * the unique order id makes a second OrderCreated for the same order (a re-sent event under a new
 * message id) a no-op instead of a second charge. An order already cancelled here (its OrderCancelled
 * came first, e.g. its deadline fired while this message waited) is not charged at all and nothing
 * is emitted: no capture, so nothing to refund (`cancellations.takeOrderLock` keeps a cancel
 * handled at the same moment from slipping past).
 */
export function processPaymentWhenOrderCreated(deps: ReactionDeps): HandlerDefinition<Tx, OrderCreated> {
  return {
    name: 'process-payment-when-order-created',
    message: OrderCreated,
    async handle(message, tx) {
      const order = message.payload
      const { orderId } = order
      const paymentId = randomUUID()
      const now = deps.clock()
      const log = { orderId, paymentId, messageId: message.id, correlationId: message.correlationId }
      await cancellations.takeOrderLock(tx, orderId)
      if (await cancellations.isCancelled(tx, orderId)) {
        deps.logger.info(log, 'order already cancelled; not charged')
        return
      }
      const outcome = charge({
        paymentMethod: order.paymentMethod,
        amount: order.totalAmount,
        currency: order.currency,
      })
      const saved = await savePayment(tx, {
        id: paymentId,
        orderId,
        customerId: order.customerId,
        status: outcome.outcome === 'captured' ? 'CAPTURED' : 'DECLINED',
        amount: order.totalAmount,
        currency: order.currency,
        paymentMethod: order.paymentMethod,
        declineReason: outcome.outcome === 'declined' ? outcome.reason : null,
        createdAt: now,
      })
      if (!saved) {
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
        await enqueue(
          tx,
          nextEvent(PaymentProcessed, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
        )
        deps.logger.debug({ ...log, amount: order.totalAmount, currency: order.currency }, 'payment captured')
        return
      }
      const payload = {
        ...common,
        reason: outcome.reason,
        message: outcome.message,
        failedAt: now.toISOString(),
      }
      await enqueue(
        tx,
        nextEvent(PaymentFailed, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
      )
      deps.logger.info({ ...log, reason: outcome.reason }, 'payment declined')
    },
  }
}
