import { randomUUID } from 'node:crypto'
import { PaymentRefunded, type EventContract } from '@saga/contracts'
import { enqueue, type HandlerDefinition } from '@saga/messaging'
import { decideRefund } from '../domain/provider.js'
import type { Tx } from '../plugins/db.js'
import { clock, type ReactionDeps } from './deps.js'
import { followUp } from './follow-up.js'

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
      const [payment] = await tx.$queryRaw<
        { id: string; status: 'CAPTURED' | 'DECLINED'; amount: bigint; currency: string; refunded: boolean }[]
      >`SELECT p.id::text, p.status, p.amount, p.currency,
               EXISTS (SELECT 1 FROM refunds r WHERE r.payment_id = p.id) AS refunded
        FROM payments p WHERE p.order_id = ${orderId}::uuid FOR UPDATE OF p`
      const decision = decideRefund(payment && { ...payment, amount: Number(payment.amount) })
      if (decision.kind === 'nothing' || !payment) {
        deps.logger.info(
          { ...log, why: decision.kind === 'nothing' ? decision.why : 'no-payment' },
          'nothing to refund',
        )
        return
      }
      const now = clock(deps)
      const refundId = randomUUID()
      await tx.refund.create({
        data: {
          id: refundId,
          paymentId: payment.id,
          orderId,
          amount: BigInt(decision.amount),
          currency: payment.currency,
          reason,
          createdAt: now,
        },
      })
      const payload = {
        orderId,
        paymentId: payment.id,
        refundId,
        amount: decision.amount,
        currency: payment.currency,
        reason,
        refundedAt: now.toISOString(),
      } as PaymentRefunded
      await enqueue(tx, followUp(message, PaymentRefunded, orderId, payload, now))
      deps.logger.info(
        { ...log, paymentId: payment.id, refundId, amount: decision.amount },
        'payment refunded',
      )
    },
  }
}
