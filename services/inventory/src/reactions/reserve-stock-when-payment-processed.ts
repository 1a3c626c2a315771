import { PaymentProcessed, StockReservationFailed, StockReserved } from '@saga/contracts'
import { enqueue, nextEvent, type HandlerDefinition, type ReactionDeps } from '@saga/messaging'
import { reserve } from '../domain/stock.js'
import type { Tx } from '../plugins/db.js'
import { cancellations, lockStock, orderState, saveReservation } from '../store.js'

/**
 * Step 3 of the saga: a captured payment reserves every line of the order, or none.
 * Emits StockReserved (lines and address on to shipment) or StockReservationFailed (reason and the
 * lines short). Concurrent orders never oversell: the stock rows are locked `FOR UPDATE` in sku
 * order (a fixed order, so two orders never deadlock), the pure `reserve` decides on what is
 * locked, and only then are they updated; the CHECK constraints on `stock` are the backstop.
 * An order already cancelled here (its OrderCancelled came first) reserves nothing and emits
 * nothing: no reservation, so nothing to release (`cancellations.takeOrderLock` keeps a cancel
 * handled at the same moment from slipping past).
 */
export function reserveStockWhenPaymentProcessed(
  deps: ReactionDeps,
): HandlerDefinition<Tx, PaymentProcessed> {
  return {
    name: 'reserve-stock-when-payment-processed',
    message: PaymentProcessed,
    async handle(message, tx) {
      const { orderId, customerId, lines, shippingAddress } = message.payload
      const log = { orderId, messageId: message.id, correlationId: message.correlationId }
      await cancellations.takeOrderLock(tx, orderId)
      const known = await orderState(tx, orderId)
      if (known.cancelled) {
        deps.logger.info(log, 'order already cancelled; nothing reserved')
        return
      }
      // A second PaymentProcessed for the same order (a new message id, so the inbox let it in)
      // must not reserve twice; the reservation rows are the record that it was handled.
      if (known.handled) {
        deps.logger.warn(log, 'order already has reservations; nothing to do')
        return
      }
      const outcome = reserve(lines, await lockStock(tx, lines))
      const now = deps.clock()
      if (outcome.kind === 'refused') {
        const payload = {
          orderId,
          customerId,
          reason: outcome.reason,
          unavailable: outcome.short,
          failedAt: now.toISOString(),
        }
        await enqueue(
          tx,
          nextEvent(StockReservationFailed, {
            cause: message,
            aggregateId: orderId,
            payload,
            occurredAt: now,
          }),
        )
        deps.logger.info(
          { ...log, reason: outcome.reason, unavailable: outcome.short },
          'stock reservation refused',
        )
        return
      }
      await saveReservation(tx, orderId, outcome.take, lines, now)
      const payload = {
        orderId,
        customerId,
        lines,
        shippingAddress,
        reservedAt: now.toISOString(),
      }
      await enqueue(
        tx,
        nextEvent(StockReserved, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
      )
      deps.logger.debug({ ...log, take: outcome.take }, 'stock reserved')
    },
  }
}
