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
      // Lock first, then look for a refund in a separate statement: under READ COMMITTED that
      // statement takes a fresh snapshot, so it sees a refund committed while we waited for the lock.
      const [payment] = await tx.$queryRaw<
        { id: string; status: 'CAPTURED' | 'DECLINED'; amount: bigint; currency: string }[]
      >`SELECT id::text, status, amount, currency FROM payments WHERE order_id = ${orderId}::uuid FOR UPDATE`
      const refunded = payment ? (await tx.refund.count({ where: { paymentId: payment.id } })) > 0 : false
      const decision = decideRefund(payment && { ...payment, amount: Number(payment.amount), refunded })
      if (decision.kind === 'nothing' || !payment) {
        const why = decision.kind === 'nothing' ? decision.why : 'no-payment'
        deps.logger.info({ ...log, why }, 'nothing to refund')
        return
      }
      const now = clock(deps)
      const refundId = randomUUID()
      // The unique payment id is the last guard: a second refund of one capture cannot be stored.
      const inserted = await tx.$executeRaw`
        INSERT INTO refunds (id, payment_id, order_id, amount, currency, reason, created_at)
        VALUES (${refundId}::uuid, ${payment.id}::uuid, ${orderId}::uuid, ${decision.amount}, ${payment.currency},
                ${reason}, ${now})
        ON CONFLICT (payment_id) DO NOTHING`
      if (inserted === 0) {
        deps.logger.info({ ...log, why: 'already-refunded' }, 'nothing to refund')
        return
      }
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
