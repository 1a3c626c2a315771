import type { ReactionDeps } from '@saga/messaging'
import { releaseStockWhenOrderCancelled } from './release-stock-when-order-cancelled.js'
import { releaseStockWhenShipmentFailed } from './release-stock-when-shipment-failed.js'
import { reserveStockWhenPaymentProcessed } from './reserve-stock-when-payment-processed.js'

/** Everything the inventory service consumes, one handler (and one queue) each (the saga map's `reactionsOf('inventory')`). */
export const inventoryReactions = (deps: ReactionDeps) => [
  reserveStockWhenPaymentProcessed(deps),
  releaseStockWhenShipmentFailed(deps),
  releaseStockWhenOrderCancelled(deps),
]
