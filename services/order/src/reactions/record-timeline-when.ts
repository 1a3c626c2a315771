import { reactionsOf } from '@saga/contracts'
import type { ReactionDeps } from '@saga/messaging'
import type { RecorderDefinition } from '@saga/messaging/parts'
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
 * How long a timeline batch waits for more events, ms. Nothing in the chain waits for these entries
 * (the order's own transitions are written with its state; a deadline's "waiting for" label reads
 * them, and already sees them late whenever this queue lags), and people read the timeline, so a
 * tenth of a second is invisible; at 50 orders/s it turns about 75 statements and commits a second
 * (two entries each) into about nine (docs/performance.md, "A wait window for the timeline recorder").
 */
export const TIMELINE_WINDOW_MS = 100

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
  windowMs: TIMELINE_WINDOW_MS,
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
