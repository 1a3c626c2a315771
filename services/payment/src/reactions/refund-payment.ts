import { randomUUID } from 'node:crypto'
import { PaymentRefunded, type EventContract } from '@saga/contracts'
import {
  enqueue,
  nextEvent,
  type ConsumedMessage,
  type HandlerDefinition,
  type ReactionDeps,
} from '@saga/messaging'
import { decideRefund } from '../domain/provider.js'
import type { Tx } from '../plugins/db.js'
import { lockPayment, saveRefund } from '../store.js'

/**
 * Refunds the order's capture in full, once, inside `tx`, and enqueues PaymentRefunded (caused by
 * `message`, with `reason`); returns whether it refunded. Exactly once whichever of the failure
 * compensations and the cancellation come, in any order or at the same moment: the payment row is
 * locked (`FOR UPDATE`) before the refund is looked for, the refund row's unique payment id backs
 * that up, and the inbox drops redeliveries. No capture (declined, never charged, already refunded)
 * means nothing to refund and no event.
 */
export async function refundCapture(
  tx: Tx,
  message: ConsumedMessage<unknown>,
  orderId: string,
  reason: string,
  deps: ReactionDeps,
): Promise<boolean> {
  const log = { orderId, reason, messageId: message.id, correlationId: message.correlationId }
  const payment = await lockPayment(tx, orderId)
  const decision = decideRefund(payment)
  if (!payment || decision.kind === 'nothing') {
    deps.logger.info(
      { ...log, why: decision.kind === 'nothing' ? decision.why : 'no-payment' },
      'nothing to refund',
    )
    return false
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
    return false
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
  await enqueue(
    tx,
    nextEvent(PaymentRefunded, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
  )
  deps.logger.info(
    { ...log, paymentId: payment.id, refundId: refund.id, amount: refund.amount },
    'payment refunded',
  )
  return true
}

/**
 * A handler refunding the order's capture in full when `contract`'s failure arrives (compensation),
 * with the failure's reason (see `refundCapture`: exactly once, also against the refund on
 * OrderCancelled).
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
      await refundCapture(tx, message, message.payload.orderId, message.payload.reason, deps)
    },
  }
}
