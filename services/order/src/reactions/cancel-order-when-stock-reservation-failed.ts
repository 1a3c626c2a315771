import { StockReservationFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import type { OrderReactionDeps } from '../metrics.js'
import { cancelOrderWhen } from './cancel-order.js'

/** Stock could not be reserved: the order is cancelled (e.g. `out_of_stock`); payment refunds on its own. */
export const cancelOrderWhenStockReservationFailed = (
  deps: OrderReactionDeps,
): HandlerDefinition<Tx, StockReservationFailed> =>
  cancelOrderWhen('cancel-order-when-stock-reservation-failed', StockReservationFailed, 'stock', deps)
