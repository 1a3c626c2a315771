import { undoWhenOrderCancelled } from '@saga/cancellations'
import type { OrderCancelled } from '@saga/contracts'
import type { HandlerDefinition, ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { cancellations } from '../store.js'
import { releaseHeldStock } from './release-stock.js'

/**
 * The order was cancelled (a step failed, its deadline passed, or the customer asked): release its
 * reservation if it still holds one, with the order's cancellation reason, and emit StockReleased;
 * otherwise emit nothing. Either way the cancellation is recorded in the same transaction, under the
 * order's lock (`undoWhenOrderCancelled`), so a PaymentProcessed that arrives later (or is being
 * handled at this moment) reserves nothing. A reservation already released on ShipmentFailed is not
 * released again (`releaseHeldStock`).
 */
export function releaseStockWhenOrderCancelled(deps: ReactionDeps): HandlerDefinition<Tx, OrderCancelled> {
  return undoWhenOrderCancelled<Tx>(
    'release-stock-when-order-cancelled',
    cancellations,
    deps,
    (tx, message) => releaseHeldStock(tx, message, message.payload.orderId, message.payload.reason, deps),
  )
}
