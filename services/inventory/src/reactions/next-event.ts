import type { EventContract, EventPayload } from '@saga/contracts'
import { followUp, type ConsumedMessage, type OutgoingMessage } from '@saga/messaging'

/**
 * The next event of the saga, caused by `cause`: messaging's `followUp` (same correlation id,
 * causation id = the cause's id, a child traceparent), aggregate = the order. The payload is
 * checked against its contract here, so a bug fails this service's handler (retried, then
 * dead-lettered here) instead of poisoning the consumers downstream.
 *
 * @throws ZodError when `payload` does not satisfy `contract.schema`
 */
export function nextEvent<C extends EventContract>(
  cause: ConsumedMessage,
  contract: C,
  orderId: string,
  payload: EventPayload<C>,
): OutgoingMessage<EventPayload<C>> {
  return {
    type: contract.type,
    routingKey: contract.routingKey,
    payload: contract.schema.parse(payload) as EventPayload<C>,
    aggregateId: orderId,
    ...followUp(cause),
  }
}
