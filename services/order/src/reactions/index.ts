import {
  OrderCancelled,
  OrderConfirmed,
  PaymentProcessed,
  PaymentRefunded,
  StockReleased,
  StockReserved,
} from '@saga/contracts'
import { cancelOrderWhenPaymentFailed } from './cancel-order-when-payment-failed.js'
import { cancelOrderWhenShipmentFailed } from './cancel-order-when-shipment-failed.js'
import { cancelOrderWhenStockReservationFailed } from './cancel-order-when-stock-reservation-failed.js'
import { confirmOrderWhenShipmentCreated } from './confirm-order-when-shipment-created.js'
import type { ReactionDeps } from '@saga/messaging'
import { recordTimelineWhen } from './record-timeline-when.js'

/**
 * Everything the order service consumes, one handler (and one queue) each: the four reactions of
 * the saga, timeline recorders for the other services' events it does not react to, and for its
 * own terminal events.
 *
 * OrderConfirmed and OrderCancelled end the chain; no other service of the fleet consumes them. The
 * relay publishes with `mandatory`, and a message no queue takes is returned, retried and finally
 * parked (docs/architecture.md, "Outbox"), so without a consumer every order would leave a parked row and turn the
 * order service's readiness red. The order service is their consumer here: recording them is a
 * no-op for the timeline (it already holds them, keyed by message id) and confirms they went out.
 * A notification or analytics service would bind queues of its own beside these.
 */
export const orderReactions = (deps: ReactionDeps) => [
  confirmOrderWhenShipmentCreated(deps),
  cancelOrderWhenPaymentFailed(deps),
  cancelOrderWhenStockReservationFailed(deps),
  cancelOrderWhenShipmentFailed(deps),
  recordTimelineWhen(PaymentProcessed, deps),
  recordTimelineWhen(StockReserved, deps),
  recordTimelineWhen(PaymentRefunded, deps),
  recordTimelineWhen(StockReleased, deps),
  recordTimelineWhen(OrderConfirmed, deps),
  recordTimelineWhen(OrderCancelled, deps),
]
