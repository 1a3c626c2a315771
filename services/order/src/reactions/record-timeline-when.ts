import { reactionsOf } from '@saga/contracts'
import type { ReactionDeps, RecorderDefinition } from '@saga/messaging'
import { recordTimelineBatch } from '../store/timeline.js'

/**
 * The events the order service only records in its orders' timelines and never decides on: the
 * other services' facts it does not react to, and its own terminal events. OrderConfirmed and
 * OrderCancelled end the chain and no service of the fleet acts on them, but the relay publishes
 * with `mandatory` (a message no queue takes is returned, retried and parked), so they need a
 * queue; they are already in the timeline (written with the transition, keyed by message id), so
 * recording them again changes nothing. A notification or analytics service would bind queues of
 * its own beside this one. The saga map (packages/contracts) lists them, marked `recorder: true`.
 */
export const TIMELINE_EVENTS = reactionsOf('order')
  .filter((reaction) => reaction.recorder === true)
  .map((reaction) => reaction.reactsTo)

/**
 * The order timeline's batch recorder (`record-timeline`, one queue for the six events above):
 * deliveries are written many at a time in one statement, deduplicated by message id (the
 * timeline's primary key), with no inbox row and no transaction per message: 6 of a confirmed
 * saga's 9 deliveries to the order service are these, and a consumer transaction each would cost
 * what docs/performance.md measures. An event for an order
 * this service does not know (another environment sharing the exchange) is recorded nowhere and
 * logged as a warning, since a retry would not change that.
 */
export const timelineRecorder = (deps: ReactionDeps): RecorderDefinition => ({
  name: 'record-timeline',
  messages: TIMELINE_EVENTS,
  async record(messages, db) {
    const entries = messages.map((message) => ({
      messageId: message.id,
      orderId: (message.payload as { orderId: string }).orderId,
      type: message.type,
      source: message.source,
      occurredAt: message.time,
      data: message.payload,
    }))
    for (const entry of await recordTimelineBatch(db, entries)) {
      deps.logger.warn(
        { orderId: entry.orderId, messageId: entry.messageId, type: entry.type },
        'event for an unknown order; ignored',
      )
    }
  },
})
