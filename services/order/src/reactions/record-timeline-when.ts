import type { EventContract, EventPayload } from '@saga/contracts'
import type { HandlerDefinition } from '@saga/messaging'
import { recordTimeline } from '../orders/timeline.js'
import type { Tx } from '../orders/types.js'
import type { ReactionDeps } from '@saga/messaging'

/**
 * Records an event the order does not react to (PaymentProcessed, StockReserved, PaymentRefunded,
 * StockReleased) in its order's timeline, so GET /orders/:id shows the whole chain. The events the
 * order reacts to are recorded by those reactions, and its own when it emits them (their consumers
 * here, for OrderConfirmed and OrderCancelled, find them recorded: the timeline is keyed by message
 * id); so each event type has exactly one handler (one queue) here. Handler name:
 * `record-timeline-when-<routing key>`.
 */
export const recordTimelineWhen = <C extends EventContract>(
  contract: C,
  deps: ReactionDeps,
): HandlerDefinition<Tx, EventPayload<C> & { orderId: string }> => ({
  name: `record-timeline-when-${contract.routingKey.replace(/\./g, '-')}`,
  message: contract as unknown as HandlerDefinition<Tx, EventPayload<C> & { orderId: string }>['message'],
  async handle(message, tx) {
    const { orderId } = message.payload
    const entry = { messageId: message.id, orderId, type: message.type, source: message.source }
    if (!(await recordTimeline(tx, { ...entry, occurredAt: message.time, data: message.payload }))) {
      deps.logger.warn(
        { orderId, messageId: message.id, type: message.type },
        'event for an unknown order; ignored',
      )
    }
  },
})
