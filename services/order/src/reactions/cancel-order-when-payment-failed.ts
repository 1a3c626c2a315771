import { PaymentFailed } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import type { Tx } from '../orders/types.js'
import { cancelOrderWhen } from './cancel-order.js'
import type { ReactionDeps } from '@saga/messaging'

/** The card was declined: the order is cancelled with the provider's reason (e.g. `card_declined`). */
export const cancelOrderWhenPaymentFailed = (deps: ReactionDeps): HandlerDefinition<Tx, PaymentFailed> =>
  cancelOrderWhen('cancel-order-when-payment-failed', PaymentFailed, 'payment', deps)
