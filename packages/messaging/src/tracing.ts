import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api'
import type { ConsumedMessage } from './types.js'

/**
 * OpenTelemetry for the outbox and inbox, through @opentelemetry/api only: without a registered SDK
 * every call below is the API's no-op (no propagator, no span recorded), so a service that exports
 * no traces pays a few function calls per message and nothing else. With an SDK registered (the
 * host's, e.g. @opentelemetry/sdk-node), the outbox row carries the W3C context across the broker:
 * `enqueue` stores the active context, the relay publishes each row in a producer span that is a
 * child of it, and the consumer runs the handler transaction in a consumer span that is a child of
 * the producer span, so the handler's own enqueues continue the same trace.
 */

/** The W3C trace context headers (https://www.w3.org/TR/trace-context/) as stored in an outbox row. */
export interface TraceCarrier {
  traceparent?: string
  tracestate?: string
}

// The name instrumentation scopes use for this package's spans.
const tracer = () => trace.getTracer('@saga/messaging')

/**
 * The active context as W3C headers (empty without an SDK or without an active span). `enqueue`
 * stores it so the relay can publish the row inside the context it was written in.
 */
export function activeTraceCarrier(): TraceCarrier {
  const carrier: TraceCarrier = {}
  propagation.inject(context.active(), carrier)
  return carrier
}

const extracted = (carrier: TraceCarrier | undefined): Context =>
  carrier?.traceparent ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT

/** The RabbitMQ attributes of OpenTelemetry's messaging semantic conventions (v1.30). */
const messagingAttributes = (
  operation: 'send' | 'process',
  exchange: string | undefined,
  routingKey: string,
  messageId: string,
  correlationId: string | undefined,
): Record<string, string> => ({
  'messaging.system': 'rabbitmq',
  'messaging.operation.type': operation,
  'messaging.operation.name': operation === 'send' ? 'publish' : 'process',
  ...(exchange ? { 'messaging.destination.name': exchange } : {}),
  'messaging.rabbitmq.destination.routing_key': routingKey,
  'messaging.message.id': messageId,
  ...(correlationId ? { 'messaging.message.conversation_id': correlationId } : {}),
})

/** One row's producer span, and the trace headers the published message carries for it. */
export interface ProducerTrace {
  span: Span
  /** The producer span's context; absent without an SDK (the row's own headers are sent then). */
  carrier: TraceCarrier
}

/**
 * Starts the producer span of one outbox row (`publish <routing key>`, kind PRODUCER), a child of
 * the context stored in the row; the relay ends it when the broker confirmed or refused the
 * message (`endProducerSpan`), so its duration is the confirm latency.
 */
export function startProducerSpan(
  stored: TraceCarrier | undefined,
  exchange: string,
  routingKey: string,
  messageId: string,
  correlationId: string | undefined,
): ProducerTrace {
  const parent = extracted(stored)
  const span = tracer().startSpan(`publish ${routingKey}`, { kind: SpanKind.PRODUCER }, parent)
  // Attributes only for a span that records: without an SDK nothing is allocated for them.
  if (span.isRecording())
    span.setAttributes(messagingAttributes('send', exchange, routingKey, messageId, correlationId))
  const carrier: TraceCarrier = {}
  propagation.inject(trace.setSpan(parent, span), carrier)
  return { span, carrier }
}

/** Ends a producer span: OK when confirmed, ERROR with `error` otherwise. */
export function endProducerSpan(span: Span, error?: string): void {
  if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error })
  span.end()
}

/**
 * Runs `fn` in the context `parentContext` with `span` active, and ends `span` when `fn` settles:
 * ERROR with the exception recorded when it throws (rethrown unchanged). Adds nothing of its own
 * to the no-SDK path: `span` is then the API's no-op and every call on it does nothing.
 */
async function runInSpan<T>(parentContext: Context, span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parentContext, span), fn)
  } catch (error) {
    span.recordException(error as Error)
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message })
    throw error
  } finally {
    span.end()
  }
}

/** What the consumer span needs to know about the message and the handler. */
export interface ConsumerSpanTarget {
  handler: string
  routingKey: string
  messageId: string
  correlationId: string
  traceparent: string | undefined
  attempt: number
}

/** The consumer span's target for `message` handled by `handler` (the batched and the single path's). */
export const consumerSpanTarget = (handler: string, message: ConsumedMessage): ConsumerSpanTarget => ({
  handler,
  routingKey: message.routingKey,
  messageId: message.id,
  correlationId: message.correlationId,
  traceparent: message.traceparent,
  attempt: message.attempt,
})

/**
 * Runs `fn` (one inbox transaction) inside a consumer span `process <handler>` (kind CONSUMER), a
 * child of the message's traceparent (the producer span), and ends it when `fn` settles: ERROR
 * with the exception when it throws. Everything `fn` does, its queries and its enqueues, runs in
 * the span's context, so follow-up events continue the trace.
 */
export function inConsumerSpan<T>(target: ConsumerSpanTarget, fn: () => Promise<T>): Promise<T> {
  const parent = extracted({ traceparent: target.traceparent })
  const span = tracer().startSpan(`process ${target.handler}`, { kind: SpanKind.CONSUMER }, parent)
  if (span.isRecording()) {
    span.setAttributes(
      messagingAttributes('process', undefined, target.routingKey, target.messageId, target.correlationId),
    )
    span.setAttributes({
      'messaging.consumer.group.name': target.handler,
      'messaging.rabbitmq.delivery_attempt': target.attempt,
    })
  }
  return runInSpan(parent, span, fn)
}

/** One message of a batch, as the batch span links to it. */
export interface BatchMember {
  id: string
  traceparent?: string | undefined
}

/**
 * Runs `fn` (one statement that records a batch of deliveries) inside one consumer span
 * `process <recorder>` (kind CONSUMER) with a span link to each message's context (the producer
 * span its traceparent names), as OpenTelemetry's messaging conventions ask of batch processing: a
 * batch has many parents, so the span starts a trace of its own and links the messages' traces.
 * Without an SDK no propagator is registered, the links are never built, and the span is the
 * API's no-op: nothing is allocated per message.
 */
export function inBatchConsumerSpan<T>(
  recorder: string,
  messages: readonly BatchMember[],
  fn: () => Promise<T>,
): Promise<T> {
  const links: Link[] = []
  if (propagation.fields().length > 0) {
    for (const message of messages) {
      if (!message.traceparent) continue
      const linked = trace.getSpanContext(extracted({ traceparent: message.traceparent }))
      if (linked) links.push({ context: linked, attributes: { 'messaging.message.id': message.id } })
    }
  }
  const span = tracer().startSpan(`process ${recorder}`, { kind: SpanKind.CONSUMER, links }, ROOT_CONTEXT)
  if (span.isRecording()) {
    span.setAttributes({
      'messaging.system': 'rabbitmq',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.consumer.group.name': recorder,
      'messaging.batch.message_count': messages.length,
    })
  }
  return runInSpan(ROOT_CONTEXT, span, fn)
}
