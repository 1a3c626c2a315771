import { randomUUID } from 'node:crypto'
import type { ConfirmChannel, Message, Options } from 'amqplib'
import type { Signals } from '../signals.js'
import { deadLetterQueueName } from '../topology.js'
import type { Logger } from '../types.js'

/** Why and where a message is dead-lettered. */
export interface DeadLetterDetails {
  /** The dead-letter queue, `<queue>.dlq`. */
  queue: string
  handler: string
  /** What was wrong: the validation problem, or the last handler error. */
  reason: string
  /** Attempts the handler made; 0 for a message that never reached it (invalid). */
  attempts: number
}

/** Thrown when the broker did not take the dead-letter copy; the original must then stay unacked. */
export class DeadLetterError extends Error {
  constructor(
    message: string,
    /** True when the broker returned the copy because the dead-letter queue does not exist. */
    readonly queueMissing = false,
    options?: { cause?: unknown },
  ) {
    super(message, options)
    this.name = 'DeadLetterError'
  }
}

// amqplib 2.3 throws once an encoded header table passes 64 KiB; a stack trace must not get near it.
const MAX_REASON_CHARS = 4_000

// The broker's per-delivery count must not travel with the copy: a quorum queue resets it on
// delivery, but replayed into any other queue a stale count would start the message with its
// attempts used up.
const withoutDeliveryCount = (headers: Record<string, unknown> | undefined): Record<string, unknown> =>
  Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => name !== 'x-delivery-count'))

/**
 * Publishes dead-letter copies on one confirm channel (see `createDeadLetterPublisher`); `copy`
 * puts a copy with `headers` added into any queue, confirmed the same way.
 */
export type DeadLetterPublisher = ((original: Message, details: DeadLetterDetails) => Promise<void>) & {
  copy(original: Message, queue: string, headers: Record<string, unknown>): Promise<void>
}

/**
 * A publisher of dead-letter copies on confirm channel `channel`: the original body and properties,
 * plus headers `x-dead-letter-reason`, `-handler`, `-attempts`, `x-original-exchange`,
 * `x-original-routing-key`, `x-dead-lettered-at` (ISO 8601). Resolves once the broker confirmed the
 * copy; published `mandatory`, so a copy returned (the queue is gone) rejects with `DeadLetterError`.
 */
export function createDeadLetterPublisher(channel: ConfirmChannel): DeadLetterPublisher {
  const returned = new Set<string>()
  channel.on('return', (message: Message) => {
    const token: unknown = message.properties.headers?.['x-dead-letter-id']
    if (typeof token === 'string') returned.add(token)
  })

  const copy = (original: Message, queue: string, headers: Record<string, unknown>): Promise<void> => {
    const token = randomUUID()
    const { properties } = original
    const options: Options.Publish = {
      // expiration and userId are left out on purpose: the copy must not expire in the DLQ, and the
      // broker rejects a userId that is not this connection's user.
      contentType: properties.contentType as string | undefined,
      contentEncoding: properties.contentEncoding as string | undefined,
      messageId: properties.messageId as string | undefined,
      correlationId: properties.correlationId as string | undefined,
      type: properties.type as string | undefined,
      appId: properties.appId as string | undefined,
      timestamp: properties.timestamp as number | undefined,
      persistent: true,
      mandatory: true,
      headers: { ...withoutDeliveryCount(properties.headers), ...headers, 'x-dead-letter-id': token },
    }
    return new Promise<void>((resolve, reject) => {
      const confirmed = (error: unknown): void => {
        const wasReturned = returned.delete(token)
        if (error) {
          reject(new DeadLetterError(`copy to '${queue}' was not confirmed`, false, { cause: error }))
        } else if (wasReturned) {
          reject(new DeadLetterError(`queue '${queue}' does not exist`, true))
        } else {
          resolve()
        }
      }
      try {
        // The default exchange routes by queue name; the broker sends a return before the confirm.
        channel.publish('', queue, original.content, options, confirmed)
      } catch (error) {
        reject(new DeadLetterError(`copy to '${queue}' could not be sent`, false, { cause: error }))
      }
    })
  }

  const deadLetter = (original: Message, details: DeadLetterDetails): Promise<void> =>
    copy(original, details.queue, {
      'x-dead-letter-reason': details.reason.slice(0, MAX_REASON_CHARS),
      'x-dead-letter-handler': details.handler,
      'x-dead-letter-attempts': details.attempts,
      'x-original-exchange': original.fields.exchange,
      'x-original-routing-key': original.fields.routingKey,
      'x-dead-lettered-at': new Date().toISOString(),
    })
  return Object.assign(deadLetter, { copy })
}

/** Who dead-lettered a message: a handler, with the attempts it made, or a batch recorder. */
export type DeadLetteredBy = { handler: string; attempts: number } | { recorder: string }

/**
 * Counts, logs (at error, with the message id, queue and dead-letter queue an operator needs) and
 * signals (`deadLettered`, `handler`: the handler's or recorder's name) a message whose dead-letter
 * copy the broker confirmed. Never throws.
 */
export function reportDeadLettered(
  to: { counters: { deadLetteredTotal: number }; logger: Logger; signals: Signals },
  message: { id: string | undefined; type: string | undefined; queue: string; reason: string },
  by: DeadLetteredBy,
): void {
  const { id, type, queue, reason } = message
  to.counters.deadLetteredTotal += 1
  const who = 'handler' in by ? { handler: by.handler } : { recorder: by.recorder }
  const fields = { messageId: id, type, ...who, queue, deadLetterQueue: deadLetterQueueName(queue), reason }
  to.logger.error('handler' in by ? { ...fields, attempts: by.attempts } : fields, 'message dead-lettered')
  const name = 'handler' in by ? by.handler : by.recorder
  to.signals.emit('deadLettered', { id, type, handler: name, reason })
}
