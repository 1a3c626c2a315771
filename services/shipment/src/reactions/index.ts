import type { ReactionDeps } from '@saga/messaging'
import { cancelShipmentWhenOrderCancelled } from './cancel-shipment-when-order-cancelled.js'
import { createShipmentWhenStockReserved } from './create-shipment-when-stock-reserved.js'

/**
 * Everything the shipment service consumes, one handler (and one queue) each (the saga map's
 * `reactionsOf('shipment')`). `carrierAccount` is CARRIER_ACCOUNT (empty while not configured).
 */
export const shipmentReactions = (deps: ReactionDeps, carrierAccount: string) => [
  createShipmentWhenStockReserved(deps, carrierAccount),
  cancelShipmentWhenOrderCancelled(deps),
]
