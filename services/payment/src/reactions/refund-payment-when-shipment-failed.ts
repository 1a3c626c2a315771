import { ShipmentFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import type { ReactionDeps } from '@saga/messaging'
import { refundPaymentWhen } from './refund-payment.js'

/** The carrier refused the shipment after the capture: refund it (reason e.g. `unsupported_country`). */
export const refundPaymentWhenShipmentFailed = (deps: ReactionDeps): HandlerDefinition<Tx, ShipmentFailed> =>
  refundPaymentWhen('refund-payment-when-shipment-failed', ShipmentFailed, deps)
