import { randomBytes } from 'node:crypto'
import type { ConsumedMessage, Logger, MessageContract, OutgoingMessage } from '../types.js'

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
 * (the process), `cause.id` as causation id, and a child of its traceparent. Example:
 * `await enqueue(tx, { type: 'stock.reserved.v1', routingKey: 'stock.reserved', payload, aggregateId, ...followUp(message) })`.
 */
export const followUp = (
  cause: Pick<ConsumedMessage, 'id' | 'correlationId' | 'traceparent'>,
): FollowUpContext => ({
  correlationId: cause.correlationId,
  causationId: cause.id,
  traceparent: childTraceparent(cause.traceparent),
})

/** What every reaction of a service needs from it: a logger, and the clock its decisions read (tests fix it). */
export interface ReactionDeps {
  logger: Logger
  /** The time now; the service passes `() => new Date()`, a test a fixed instant. */
  clock: () => Date
}

// A Standard Schema path segment is a key or `{ key }`.
const pathOf = (path: ReadonlyArray<unknown> | undefined): string =>
  (path ?? []).map((s) => String(typeof s === 'object' && s !== null && 'key' in s ? s.key : s)).join('.') ||
  '(root)'

/** Thrown by `nextEvent` when the payload does not satisfy its contract: a bug in the reaction. */
export class InvalidPayloadError extends Error {
  constructor(
    readonly type: string,
    readonly issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<unknown> }>,
  ) {
    super(`${type} payload is invalid: ${issues.map((i) => `${pathOf(i.path)} ${i.message}`).join('; ')}`)
    this.name = 'InvalidPayloadError'
  }
}

/** What every event says besides its contract. */
export interface EventOptions<P> {
  /** The entity the event is about (CloudEvents `subject`), e.g. the order id. */
  aggregateId: string
  /** The event data, as the contract's schema takes it; checked here. */
  payload: NoInfer<P>
  /** When it happened, by the caller's clock (CloudEvents `time`). */
  occurredAt: Date
}

/** `nextEvent`'s options: the event, and the message it is a consequence of. */
export interface NextEventOptions<P> extends EventOptions<P> {
  /** The handled message: its correlation id, its id as causation id, a child of its traceparent. */
  cause: Pick<ConsumedMessage, 'id' | 'correlationId' | 'traceparent'>
}

/** `firstEvent`'s options: the event that starts a process (caused by a request, not a message). */
export interface FirstEventOptions<P> extends EventOptions<P> {
  /** Ties every message of the process together. Default `aggregateId` (the process is the entity's). */
  correlationId?: string | undefined
  /** A W3C traceparent to store when no OpenTelemetry context is active (see `enqueue`). */
  traceparent?: string | undefined
}

/**
 * `payload` as `contract`'s schema outputs it.
 * @throws InvalidPayloadError when it does not satisfy the schema
 * @throws TypeError when the schema validates asynchronously (an event's schema must be synchronous)
 */
function validPayload<P>(contract: MessageContract<P>, payload: unknown): P {
  const result = contract.schema['~standard'].validate(payload)
  if (result instanceof Promise)
    throw new TypeError(`${contract.type}: asynchronous schemas are not supported`)
  if (result.issues) throw new InvalidPayloadError(contract.type, result.issues)
  return result.value
}

/**
 * The first event of a process, caused by a request (an order placed): the contract's type and
 * routing key, the payload as its schema outputs it, `aggregateId` as subject and, unless given, as
 * correlation id. Checked here, so a bug fails the request, not the consumers downstream. Example:
 * `await enqueue(tx, firstEvent(OrderCreated, { aggregateId: orderId, payload, occurredAt: now }))`.
 * @throws InvalidPayloadError when `payload` does not satisfy `contract.schema`
 * @throws TypeError when the schema validates asynchronously
 */
export function firstEvent<P>(
  contract: MessageContract<P>,
  options: FirstEventOptions<P>,
): OutgoingMessage<P> {
  const context = {
    correlationId: options.correlationId ?? options.aggregateId,
    traceparent: options.traceparent,
  }
  return eventOf(contract, options, context)
}

/**
 * The next event of a process, caused by the handled message `options.cause`: as `firstEvent`, with
 * the tracing of `followUp`. Checked here, so a bug fails the reaction that made it, not the
 * consumers downstream. Example:
 * `await enqueue(tx, nextEvent(StockReserved, { cause: message, aggregateId: orderId, payload, occurredAt: now }))`.
 * @throws InvalidPayloadError when `payload` does not satisfy `contract.schema`
 * @throws TypeError when the schema validates asynchronously (a reaction's schema must be synchronous)
 */
export function nextEvent<P>(contract: MessageContract<P>, options: NextEventOptions<P>): OutgoingMessage<P> {
  return eventOf(contract, options, followUp(options.cause))
}

/** The event of `contract` that `options` describe (payload checked), with `context` and the dataschema. */
function eventOf<P>(
  contract: MessageContract<P>,
  options: EventOptions<P>,
  context: FollowUpContext,
): OutgoingMessage<P> {
  return {
    type: contract.type,
    routingKey: contract.routingKey,
    payload: validPayload(contract, options.payload),
    aggregateId: options.aggregateId,
    occurredAt: options.occurredAt,
    ...context,
    ...(contract.dataschema === undefined ? {} : { dataschema: contract.dataschema }),
    ...(contract.ordering === 'per-key' ? { orderingKey: options.aggregateId } : {}),
  }
}
