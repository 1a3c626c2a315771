import { ShipmentFailed, StockReleased } from '@saga/contracts'
import { enqueue, type HandlerDefinition, type Logger } from '@saga/messaging'
import { lockOrder } from '../domain/stock.js'
import type { Tx } from '../plugins/db.js'
import { nextEvent } from './next-event.js'

/**
 * Compensation: the carrier refused the shipment, so the order's reservation goes back to
 * available stock, exactly once. The order's RESERVED rows are locked and flipped to RELEASED in
 * the same transaction as the stock update, so a second ShipmentFailed for the order (or a
 * concurrent one) finds nothing left to release and emits nothing. Emits StockReleased.
 */
export function releaseStockWhenShipmentFailed(deps: {
  logger: Logger
}): HandlerDefinition<Tx, ShipmentFailed> {
  return {
    name: 'release-stock-when-shipment-failed',
    message: ShipmentFailed,
    async handle(message, tx) {
      const { orderId, lines, reason } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      const held = await tx.$queryRaw<{ sku: string; quantity: number }[]>`
        SELECT sku, quantity FROM reservation
        WHERE order_id = ${orderId}::uuid AND status = 'RESERVED'
        ORDER BY line_no FOR UPDATE`
      if (held.length === 0) {
        deps.logger.warn(log, 'no held reservation for the order; nothing to release')
        return
      }
      const now = new Date()
      const perSku = new Map<string, number>()
      for (const row of held) perSku.set(row.sku, (perSku.get(row.sku) ?? 0) + row.quantity)
      // Same sku order as the reservation takes its row locks, so the two never deadlock.
      for (const sku of lockOrder(held)) {
        const quantity = perSku.get(sku) ?? 0
        await tx.$executeRaw`
          UPDATE stock SET available = available + ${quantity}, reserved = reserved - ${quantity}, updated_at = ${now}
          WHERE sku = ${sku}`
      }
      await tx.reservation.updateMany({
        where: { orderId, status: 'RESERVED' },
        data: { status: 'RELEASED', releasedAt: now },
      })
      // The order's lines as the event carried them: a reservation is all of them or none, so they
      // are what was held (the rows carry no prices; the contract's lines do).
      await enqueue(
        tx,
        nextEvent(message, StockReleased, orderId, { orderId, lines, reason, releasedAt: now.toISOString() }),
      )
      deps.logger.info({ ...log, released: Object.fromEntries(perSku) }, 'stock released')
    },
  }
}
