import { ShipmentFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import type { OrderReactionDeps } from '../metrics.js'
import { cancelOrderWhen } from './cancel-order.js'

/**
 * The carrier refused the shipment: the order is cancelled (e.g. `unsupported_country`); payment
 * refunds and inventory releases on their own.
 */
export const cancelOrderWhenShipmentFailed = (
  deps: OrderReactionDeps,
): HandlerDefinition<Tx, ShipmentFailed> =>
  cancelOrderWhen('cancel-order-when-shipment-failed', ShipmentFailed, 'shipment', deps)
