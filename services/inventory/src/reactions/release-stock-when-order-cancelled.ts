import { OrderCancelled } from '@saga/contracts'
import type { HandlerDefinition, ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { saveCancellation, takeOrderLock } from '../store.js'
import { releaseHeldStock } from './release-stock.js'

/**
 * The order was cancelled (a step failed, its deadline passed, or the customer asked): release its
 * reservation if it still holds one, with the order's cancellation reason, and emit StockReleased;
 * otherwise emit nothing. Either way the cancellation is recorded in the same transaction, under the
 * order's lock (`takeOrderLock`), so a PaymentProcessed that arrives later (or is being handled at
 * this moment) reserves nothing. A reservation already released on ShipmentFailed is not released
 * again (`releaseHeldStock`).
 */
export function releaseStockWhenOrderCancelled(deps: ReactionDeps): HandlerDefinition<Tx, OrderCancelled> {
  return {
    name: 'release-stock-when-order-cancelled',
    message: OrderCancelled,
    async handle(message, tx) {
      const { orderId, reason, cancelledAt } = message.payload
      await takeOrderLock(tx, orderId)
      if (!(await saveCancellation(tx, { orderId, reason, cancelledAt: new Date(cancelledAt) }))) {
        deps.logger.info(
          { orderId, messageId: message.id, correlationId: message.correlationId },
          'order cancellation already recorded',
        )
      }
      await releaseHeldStock(tx, message, orderId, reason, deps)
    },
  }
}
