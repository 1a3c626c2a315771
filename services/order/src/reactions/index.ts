import { PaymentProcessed, PaymentRefunded, StockReleased, StockReserved } from '@saga/contracts'
import { cancelOrderWhenPaymentFailed } from './cancel-order-when-payment-failed.js'
import { cancelOrderWhenShipmentFailed } from './cancel-order-when-shipment-failed.js'
import { cancelOrderWhenStockReservationFailed } from './cancel-order-when-stock-reservation-failed.js'
import { confirmOrderWhenShipmentCreated } from './confirm-order-when-shipment-created.js'
import type { ReactionDeps } from './deps.js'
import { recordTimelineWhen } from './record-timeline-when.js'

export type { ReactionDeps } from './deps.js'

/**
 * Everything the order service consumes, one handler (and one queue) each: the four reactions of
 * the saga, and timeline recorders for the other services' events it does not react to.
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
]
