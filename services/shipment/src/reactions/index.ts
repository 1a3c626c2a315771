import {
  createShipmentWhenStockReserved,
  type CreateShipmentDeps,
} from './create-shipment-when-stock-reserved.js'

/** What the reactions need from the service. */
export type ReactionDeps = CreateShipmentDeps

/** Everything the shipment service consumes, one handler (and one queue) each. */
export const shipmentReactions = (deps: ReactionDeps) => [createShipmentWhenStockReserved(deps)]
