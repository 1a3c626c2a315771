import type { EventContract, EventPayload } from '@saga/contracts'
import { followUp as tracing, type ConsumedMessage, type OutgoingMessage } from '@saga/messaging'

/**
 * The next event of the saga, caused by `cause`: same correlation id, causation id = the cause's id,
 * a child traceparent (messaging's `followUp`), aggregate = the order. The payload is checked
 * against its contract here, so a bug fails this handler (retried, then dead-lettered here)
 * instead of poisoning the consumers.
 * @throws ZodError when `payload` does not satisfy `contract.schema`
 */
export function followUp<C extends EventContract>(
  cause: ConsumedMessage,
  contract: C,
  orderId: string,
  payload: EventPayload<C>,
  occurredAt: Date,
): OutgoingMessage<EventPayload<C>> {
  return {
    type: contract.type,
    routingKey: contract.routingKey,
    payload: contract.schema.parse(payload) as EventPayload<C>,
    aggregateId: orderId,
    ...tracing(cause),
    occurredAt,
  }
}
