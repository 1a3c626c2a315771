import { ShipmentFailed, StockReleased } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { lockHeldStock, saveRelease } from '../store.js'

/**
 * Compensation: the carrier refused the shipment, so the order's reservation goes back to
 * available stock, exactly once. The order's RESERVED rows are locked and flipped to RELEASED in
 * the same transaction as the stock update, so a second ShipmentFailed for the order (or a
 * concurrent one) finds nothing left to release and emits nothing. Emits StockReleased.
 */
export function releaseStockWhenShipmentFailed(deps: ReactionDeps): HandlerDefinition<Tx, ShipmentFailed> {
  return {
    name: 'release-stock-when-shipment-failed',
    message: ShipmentFailed,
    async handle(message, tx) {
      const { orderId, lines, reason } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      const held = await lockHeldStock(tx, orderId)
      if (held.size === 0) {
        deps.logger.warn(log, 'no held reservation for the order; nothing to release')
        return
      }
      const now = deps.clock()
      await saveRelease(tx, orderId, held, now)
      // The order's lines as the event carried them: a reservation is all of them or none, so they
      // are what was held (the rows carry no prices; the contract's lines do).
      const payload = { orderId, lines, reason, releasedAt: now.toISOString() }
      await enqueue(tx, nextEvent(message, StockReleased, orderId, payload, now))
      deps.logger.info({ ...log, released: Object.fromEntries(held) }, 'stock released')
    },
  }
}
