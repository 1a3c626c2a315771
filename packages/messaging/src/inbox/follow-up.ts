import { randomBytes } from 'node:crypto'
import type { ConsumedMessage, OutgoingMessage } from '../types.js'

/** The tracing attributes a follow-up message inherits from the message that caused it. */
export type FollowUpContext = Pick<OutgoingMessage, 'correlationId' | 'causationId' | 'traceparent'>

// W3C trace context version 00: version-traceid-parentid-flags (https://www.w3.org/TR/trace-context/#traceparent-header).
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const ALL_ZERO = /^0+$/

/**
 * A child `traceparent` of `parent`: the same trace id and flags with a fresh parent (span) id, so a
 * tracer shows the follow-up as a step of the same trace. Undefined when `parent` is absent or not a
 * valid version-00 header (an invalid one must not be propagated, per the spec).
 */
export function childTraceparent(
  parent: string | undefined,
  random: (size: number) => Buffer = randomBytes,
): string | undefined {
  const match = parent === undefined ? null : TRACEPARENT.exec(parent)
  if (!match) return undefined
  const [, traceId, parentId, flags] = match as unknown as [string, string, string, string]
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return undefined
  let spanId = random(8).toString('hex')
  while (ALL_ZERO.test(spanId)) spanId = random(8).toString('hex')
  return `00-${traceId}-${spanId}-${flags}`
}

/**
 * What a handler puts into the message it enqueues in reaction to `cause`: the same correlation id
 * (the saga), `cause.id` as causation id, and a child of its traceparent. Example:
 * `await enqueue(tx, { type: 'stock.reserved.v1', routingKey: 'stock.reserved', payload, aggregateId, ...followUp(message) })`.
 */
export const followUp = (
  cause: Pick<ConsumedMessage, 'id' | 'correlationId' | 'traceparent'>,
): FollowUpContext => ({
  correlationId: cause.correlationId,
  causationId: cause.id,
  traceparent: childTraceparent(cause.traceparent),
})
