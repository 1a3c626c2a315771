import { StockReservationFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import type { ReactionDeps } from '@saga/messaging'
import { refundPaymentWhen } from './refund-payment.js'

/** Stock could not be reserved after the capture: refund it (reason e.g. `out_of_stock`). */
export const refundPaymentWhenStockReservationFailed = (
  deps: ReactionDeps,
): HandlerDefinition<Tx, StockReservationFailed> =>
  refundPaymentWhen('refund-payment-when-stock-reservation-failed', StockReservationFailed, deps)
