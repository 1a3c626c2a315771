import { PaymentProcessed, StockReservationFailed, StockReserved } from '@saga/contracts'
import { enqueue, type HandlerDefinition, type Logger } from '@saga/messaging'
import { lockOrder, reserve } from '../domain/stock.js'
import type { Tx } from '../plugins/db.js'
import { nextEvent } from './next-event.js'

/**
 * Step 3 of the saga: a captured payment reserves every line of the order, or none.
 * Emits StockReserved (lines and address on to shipment) or StockReservationFailed (reason and the
 * lines short). Concurrent orders never oversell: the stock rows are locked `FOR UPDATE` in sku
 * order (a fixed order, so two orders never deadlock), the pure `reserve` decides on what is
 * locked, and only then are they updated; the CHECK constraints on `stock` are the backstop.
 */
export function reserveStockWhenPaymentProcessed(deps: {
  logger: Logger
}): HandlerDefinition<Tx, PaymentProcessed> {
  return {
    name: 'reserve-stock-when-payment-processed',
    message: PaymentProcessed,
    async handle(message, tx) {
      const { orderId, customerId, lines, shippingAddress } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      // A second PaymentProcessed for the same order (a new message id, so the inbox let it in)
      // must not reserve twice; the reservation rows are the record that it was handled.
      if ((await tx.reservation.count({ where: { orderId } })) > 0) {
        deps.logger.warn(log, 'order already has reservations; nothing to do')
        return
      }
      const skus = lockOrder(lines)
      const rows = await tx.$queryRaw<{ sku: string; available: number }[]>`
        SELECT sku, available FROM stock WHERE sku = ANY(${skus}::text[]) ORDER BY sku COLLATE "C" FOR UPDATE`
      const outcome = reserve(lines, new Map(rows.map((row) => [row.sku, row.available])))
      const now = new Date()
      if (outcome.kind === 'refused') {
        await enqueue(
          tx,
          nextEvent(message, StockReservationFailed, orderId, {
            orderId,
            customerId,
            reason: outcome.reason,
            unavailable: outcome.short,
            failedAt: now.toISOString(),
          }),
        )
        deps.logger.info(
          { ...log, reason: outcome.reason, unavailable: outcome.short },
          'stock reservation refused',
        )
        return
      }
      for (const { sku, quantity } of outcome.take) {
        await tx.$executeRaw`
          UPDATE stock SET available = available - ${quantity}, reserved = reserved + ${quantity}, updated_at = ${now}
          WHERE sku = ${sku}`
      }
      await tx.reservation.createMany({
        data: lines.map((line, lineNo) => ({
          orderId,
          lineNo,
          sku: line.sku,
          quantity: line.quantity,
          reservedAt: now,
        })),
      })
      await enqueue(
        tx,
        nextEvent(message, StockReserved, orderId, {
          orderId,
          customerId,
          lines,
          shippingAddress,
          reservedAt: now.toISOString(),
        }),
      )
      deps.logger.info({ ...log, take: outcome.take }, 'stock reserved')
    },
  }
}
