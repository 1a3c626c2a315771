import { ShipmentFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../orders/types.js'
import { cancelOrderWhen } from './cancel-order.js'
import type { ReactionDeps } from '@saga/messaging'

/**
 * The carrier refused the shipment: the order is cancelled (e.g. `unsupported_country`); payment
 * refunds and inventory releases on their own.
 */
export const cancelOrderWhenShipmentFailed = (deps: ReactionDeps): HandlerDefinition<Tx, ShipmentFailed> =>
  cancelOrderWhen('cancel-order-when-shipment-failed', ShipmentFailed, 'shipment', deps)
