import { undoWhenOrderCancelled } from '@saga/cancellations'
import type { OrderCancelled } from '@saga/contracts'
import type { HandlerDefinition, ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { cancellations } from '../store.js'
import { refundCapture } from './refund-payment.js'

/**
 * The order was cancelled (a step failed, its deadline passed, or the customer asked): refund its
 * capture if there is one not yet refunded, with the order's cancellation reason, and emit
 * PaymentRefunded; otherwise emit nothing. Either way the cancellation is recorded in the same
 * transaction, under the order's lock (`undoWhenOrderCancelled`), so an OrderCreated that arrives
 * later (or is being handled at this moment) charges nothing. A capture refunded already by the
 * stock-failed or shipment-failed compensation is not refunded again (`refundCapture`).
 */
export function refundPaymentWhenOrderCancelled(deps: ReactionDeps): HandlerDefinition<Tx, OrderCancelled> {
  return undoWhenOrderCancelled<Tx>(
    'refund-payment-when-order-cancelled',
    cancellations,
    deps,
    (tx, message) => refundCapture(tx, message, message.payload.orderId, message.payload.reason, deps),
  )
}
