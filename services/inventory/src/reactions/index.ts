import type { Logger } from '@saga/messaging'
import { releaseStockWhenShipmentFailed } from './release-stock-when-shipment-failed.js'
import { reserveStockWhenPaymentProcessed } from './reserve-stock-when-payment-processed.js'

/** What the reactions need from the service. */
export interface ReactionDeps {
  logger: Logger
}

/** Everything the inventory service consumes, one handler (and one queue) each. */
export const inventoryReactions = (deps: ReactionDeps) => [
  reserveStockWhenPaymentProcessed(deps),
  releaseStockWhenShipmentFailed(deps),
]
