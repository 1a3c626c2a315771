import { cancelOrderWhenPaymentFailed } from './cancel-order-when-payment-failed.js'
import { cancelOrderWhenShipmentFailed } from './cancel-order-when-shipment-failed.js'
import { cancelOrderWhenStockReservationFailed } from './cancel-order-when-stock-reservation-failed.js'
import { confirmOrderWhenShipmentCreated } from './confirm-order-when-shipment-created.js'
import type { OrderReactionDeps } from '../metrics.js'

export { timelineRecorder, TIMELINE_EVENTS } from './record-timeline-when.js'

/**
 * The four reactions of the saga in the order service, one handler (and one queue) each, each in an
 * inbox transaction. The events it only records (the other services' facts it does not react to,
 * and its own terminal events) go to the batch recorder `timelineRecorder` instead (one queue,
 * `record-timeline`; the saga map marks those entries `recorder: true`).
 */
export const orderReactions = (deps: OrderReactionDeps) => [
  confirmOrderWhenShipmentCreated(deps),
  cancelOrderWhenPaymentFailed(deps),
  cancelOrderWhenStockReservationFailed(deps),
  cancelOrderWhenShipmentFailed(deps),
]
