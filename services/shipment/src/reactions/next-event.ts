import type { EventContract, EventPayload } from '@saga/contracts'
import type { ConsumedMessage, OutgoingMessage } from '@saga/messaging'

/**
 * The next event of the saga, caused by `cause`: same correlation id and trace, causation id = the
 * cause's id, aggregate = the order. The payload is checked against its contract here, so a bug
 * fails this service's handler (retried, then dead-lettered here) instead of poisoning consumers.
 *
 * @throws ZodError when `payload` does not satisfy `contract.schema`
 */
export function followUp<C extends EventContract>(
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
    correlationId: cause.correlationId,
    causationId: cause.id,
    traceparent: cause.traceparent,
  }
}
