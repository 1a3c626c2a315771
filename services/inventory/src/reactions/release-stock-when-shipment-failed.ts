import { ShipmentFailed } from '@saga/contracts'
import type { HandlerDefinition, ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { releaseHeldStock } from './release-stock.js'

/**
 * Compensation: the carrier refused the shipment, so the order's reservation goes back to
 * available stock and StockReleased is emitted, exactly once, also against the release on
 * OrderCancelled (`releaseHeldStock`). Nothing held (already released) emits nothing.
 */
export function releaseStockWhenShipmentFailed(deps: ReactionDeps): HandlerDefinition<Tx, ShipmentFailed> {
  return {
    name: 'release-stock-when-shipment-failed',
    message: ShipmentFailed,
    async handle(message, tx) {
      const { orderId, reason, lines } = message.payload
      // The lines as the event carried them: a reservation is all of them or none.
      await releaseHeldStock(tx, message, orderId, reason, deps, lines)
    },
  }
}
