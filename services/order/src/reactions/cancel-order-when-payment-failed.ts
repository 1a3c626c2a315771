import { PaymentFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import type { OrderReactionDeps } from '../metrics.js'
import { cancelOrderWhen } from './cancel-order.js'

/** The card was declined: the order is cancelled with the provider's reason (e.g. `card_declined`). */
export const cancelOrderWhenPaymentFailed = (deps: OrderReactionDeps): HandlerDefinition<Tx, PaymentFailed> =>
  cancelOrderWhen('cancel-order-when-payment-failed', PaymentFailed, 'payment', deps)
