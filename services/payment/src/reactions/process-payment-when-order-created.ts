import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { OrderCreatedV1toV2, OrderCreatedV2, PaymentFailed, PaymentProcessed } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import { answerDelayMs, charge, DEFAULT_SLOW_TOKEN_DELAY_MS } from '../domain/provider.js'
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
 * handled at the same moment from slipping past). A `tok_slow` charge waits `slowTokenDelayMs` first
 * (the simulated provider is slow, see `answerDelayMs`), before the lock, so a cancel handled
 * meanwhile is recorded and the charge then sees it; the wait holds this handler's transaction and
 * its batch, so it is for trying a cancel by hand, not for load.
 * Reads both versions of OrderCreated: v2, and v1 upcast to v2 at the inbox (`OrderCreatedV1toV2`),
 * so it runs beside an order service that still announces orders with v1.
 */
export function processPaymentWhenOrderCreated(
  deps: ReactionDeps,
  { slowTokenDelayMs = DEFAULT_SLOW_TOKEN_DELAY_MS }: { slowTokenDelayMs?: number } = {},
): HandlerDefinition<Tx, OrderCreatedV2> {
  return {
    name: 'process-payment-when-order-created',
    message: OrderCreatedV2,
    upcasts: [OrderCreatedV1toV2],
    async handle(message, tx) {
      const order = message.payload
      const { orderId, total } = order
      const paymentId = randomUUID()
      const now = deps.clock()
      const log = { orderId, paymentId, messageId: message.id, correlationId: message.correlationId }
      const delayMs = answerDelayMs(order.paymentMethod, slowTokenDelayMs)
      if (delayMs > 0) {
        deps.logger.info({ ...log, delayMs }, 'slow payment token: the provider answers after a delay')
        await sleep(delayMs)
      }
      await cancellations.takeOrderLock(tx, orderId)
      if (await cancellations.isCancelled(tx, orderId)) {
        deps.logger.info(log, 'order already cancelled; not charged')
        return
      }
      const outcome = charge({
        paymentMethod: order.paymentMethod,
        amount: total.amount,
        currency: total.currency,
      })
      const saved = await savePayment(tx, {
        id: paymentId,
        orderId,
        customerId: order.customerId,
        status: outcome.outcome === 'captured' ? 'CAPTURED' : 'DECLINED',
        amount: total.amount,
        currency: total.currency,
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
        amount: total.amount,
        currency: total.currency,
      }
      // What either event follows from: this OrderCreated, for this order, now.
      const follow = { cause: message, aggregateId: orderId, occurredAt: now }
      if (outcome.outcome === 'captured') {
        const { lines, shippingAddress } = order
        const payload = { ...common, lines, shippingAddress, processedAt: now.toISOString() }
        await enqueue(tx, nextEvent(PaymentProcessed, { ...follow, payload }))
        deps.logger.debug({ ...log, amount: total.amount, currency: total.currency }, 'payment captured')
        return
      }
      const { reason, message: detail } = outcome
      const payload = { ...common, reason, message: detail, failedAt: now.toISOString() }
      await enqueue(tx, nextEvent(PaymentFailed, { ...follow, payload }))
      deps.logger.info({ ...log, reason }, 'payment declined')
    },
  }
}
