import { processPaymentWhenOrderCreated } from './process-payment-when-order-created.js'
import type { ReactionDeps } from '@saga/messaging'
import { refundPaymentWhenOrderCancelled } from './refund-payment-when-order-cancelled.js'
import { refundPaymentWhenShipmentFailed } from './refund-payment-when-shipment-failed.js'
import { refundPaymentWhenStockReservationFailed } from './refund-payment-when-stock-reservation-failed.js'

/**
 * Everything the payment service consumes, one handler (and one queue) each. `provider` sets the
 * simulated provider's `tok_slow` delay (PAYMENT_SLOW_TOKEN_DELAY_MS).
 */
export const paymentReactions = (deps: ReactionDeps, provider: { slowTokenDelayMs?: number } = {}) => [
  processPaymentWhenOrderCreated(deps, provider),
  refundPaymentWhenStockReservationFailed(deps),
  refundPaymentWhenShipmentFailed(deps),
  refundPaymentWhenOrderCancelled(deps),
]
