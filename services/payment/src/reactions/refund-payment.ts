import { randomUUID } from 'node:crypto'
import { PaymentRefunded, type EventContract } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import { decideRefund } from '../domain/provider.js'
import type { Tx } from '../plugins/db.js'
import { lockPayment, saveRefund } from '../store.js'

/**
 * A handler refunding the order's capture in full when `contract`'s failure arrives (compensation),
 * exactly once: the payment row is locked (`FOR UPDATE`) so the stock-failed and shipment-failed
 * reactions cannot both refund, the refund row's unique payment id backs that up, and the inbox
 * drops redeliveries. No capture (declined, or never charged) means nothing to refund and no event.
 */
export function refundPaymentWhen<P extends { orderId: string; reason: string }>(
  name: string,
  contract: EventContract & HandlerDefinition<Tx, P>['message'],
  deps: ReactionDeps,
): HandlerDefinition<Tx, P> {
  return {
    name,
    message: contract,
    async handle(message, tx) {
      const { orderId, reason } = message.payload
      const log = { orderId, reason, messageId: message.id, correlationId: message.correlationId }
      const payment = await lockPayment(tx, orderId)
      if (!payment) {
        deps.logger.info({ ...log, why: 'no-payment' }, 'nothing to refund')
        return
      }
      const decision = decideRefund(payment)
      if (decision.kind === 'nothing') {
        deps.logger.info({ ...log, why: decision.why }, 'nothing to refund')
        return
      }
      const now = deps.clock()
      const refund = {
        id: randomUUID(),
        paymentId: payment.id,
        orderId,
        amount: decision.amount,
        currency: payment.currency,
        reason,
        createdAt: now,
      }
      // The unique payment id is the last guard: a second refund of one capture cannot be stored.
      if (!(await saveRefund(tx, refund))) {
        deps.logger.info({ ...log, why: 'already-refunded' }, 'nothing to refund')
        return
      }
      const payload = {
        orderId,
        paymentId: payment.id,
        refundId: refund.id,
        amount: refund.amount,
        currency: refund.currency,
        reason,
        refundedAt: now.toISOString(),
      }
      await enqueue(tx, nextEvent(message, PaymentRefunded, orderId, payload, now))
      deps.logger.info(
        { ...log, paymentId: payment.id, refundId: refund.id, amount: refund.amount },
        'payment refunded',
      )
    },
  }
}
