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
import type { OutboxRow } from './outbox/envelope.js'
import type { ConsumedMessage } from './types.js'
import { errorCode } from './errors.js'

/**
 * OpenTelemetry for the outbox and inbox, through @opentelemetry/api only: without a registered SDK
 * every call below is a no-op, a few function calls per message. With one (the host's), the outbox
 * row carries the W3C context across the broker: `enqueue` stores the active context, the relay
 * publishes the row in a producer span that is its child, and the handler transaction runs in a
 * consumer span that is the producer span's child, so the handler's enqueues continue the trace.
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

/**
 * Attribute names of OpenTelemetry's semantic conventions for RabbitMQ messaging spans, as of
 * @opentelemetry/semantic-conventions 1.45 (https://opentelemetry.io/docs/specs/semconv/messaging/rabbitmq/).
 * Copied rather than imported: the incubating entry point is not stable, and OpenTelemetry asks
 * libraries to copy what they use from it. `test/tracing.int.test.ts` checks them against the package.
 */
export const SEMCONV = {
  system: 'messaging.system.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  destination: 'messaging.destination.name',
  routingKey: 'rabbitmq.destination.routing_key',
  deliveryTag: 'rabbitmq.message.delivery_tag',
  messageId: 'messaging.message.id',
  conversationId: 'messaging.message.conversation_id',
  batchCount: 'messaging.batch.message_count',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
} as const

/** This package's own span attributes, under its own prefix. */
export const OWN = {
  /** The handler or recorder that processed the message. */
  handler: 'saga_messaging.handler',
  /** 1 on the first delivery to the handler, counting retries and redeliveries. */
  attempt: 'saga_messaging.delivery_attempt',
} as const

/**
 * `messaging.destination.name` for RabbitMQ: `{exchange}:{routing key}` on publish,
 * `{exchange}:{routing key}:{queue}` on process, each part left out when empty, and the routing key
 * left out when it equals the queue (a message sent straight to its queue); `amq.default` when
 * nothing is left.
 */
export function rabbitDestination(exchange: string, routingKey: string | undefined, queue?: string): string {
  // Plain concatenation: this runs once per message, SDK or not.
  let name = exchange
  if (routingKey && routingKey !== queue) name = name === '' ? routingKey : `${name}:${routingKey}`
  if (queue) name = name === '' ? queue : `${name}:${queue}`
  return name === '' ? 'amq.default' : name
}

/**
 * The broker's address and port of an AMQP URL, for `server.address` and `server.port`; undefined
 * for a list of cluster nodes: the relay fixes its spans' attributes at start, before it knows the node
 * it will publish through, and naming the first node would be wrong after a failover.
 */
export function brokerAddress(amqpUrl: string): { address: string; port: number } | undefined {
  if (amqpUrl.includes(',')) return undefined
  try {
    const url = new URL(amqpUrl)
    const port = url.port === '' ? (url.protocol === 'amqps:' ? 5671 : 5672) : Number(url.port)
    return { address: url.hostname, port }
  } catch {
    return undefined
  }
}

/** One row's producer span, and the trace headers the published message carries for it. */
export interface ProducerTrace {
  span: Span
  /** The producer span's context; absent without an SDK (the row's own headers are sent then). */
  carrier: TraceCarrier
}

/** Sets what every RabbitMQ span carries (system, operation, destination); call when `span.isRecording()`. */
function setRabbitAttributes(span: Span, operation: 'send' | 'process', destination: string): void {
  span.setAttributes({
    [SEMCONV.system]: 'rabbitmq',
    [SEMCONV.operationType]: operation,
    [SEMCONV.operationName]: operation === 'send' ? 'publish' : 'process',
    [SEMCONV.destination]: destination,
  })
}

/**
 * Starts the producer span of outbox row `row` published to `exchange` through `broker`
 * (`publish {exchange}:{routing key}`, kind PRODUCER), a child of the context stored in the row; the
 * relay ends it when the broker confirmed or refused the message (`endProducerSpan`), so its
 * duration is the confirm latency.
 */
export function startProducerSpan(
  row: OutboxRow,
  exchange: string,
  broker?: { address: string; port: number },
): ProducerTrace {
  const parent = extracted(row.headers ?? undefined)
  const destination = rabbitDestination(exchange, row.routing_key)
  const span = tracer().startSpan(`publish ${destination}`, { kind: SpanKind.PRODUCER }, parent)
  // Attributes only for a span that records: without an SDK nothing is allocated for them.
  if (span.isRecording()) {
    setRabbitAttributes(span, 'send', destination)
    const correlationId = row.headers?.correlationId
    span.setAttributes({
      [SEMCONV.routingKey]: row.routing_key,
      [SEMCONV.messageId]: row.id,
      ...(correlationId ? { [SEMCONV.conversationId]: correlationId } : {}),
      ...(broker ? { [SEMCONV.serverAddress]: broker.address, [SEMCONV.serverPort]: broker.port } : {}),
    })
  }
  const carrier: TraceCarrier = {}
  propagation.inject(trace.setSpan(parent, span), carrier)
  return { span, carrier }
}

/**
 * Ends a producer span: OK when confirmed, else ERROR with `failure`'s message and its kind as
 * `error.type` (`unroutable`, `poison`, `transport`, `rejected`: see `PublishFailure`).
 */
export function endProducerSpan(span: Span, failure?: { error: string; kind: string }): void {
  if (failure !== undefined) {
    span.setAttribute(SEMCONV.errorType, failure.kind)
    span.setStatus({ code: SpanStatusCode.ERROR, message: failure.error })
  }
  span.end()
}

/**
 * Runs `fn` in `parentContext` with `span` active, and ends `span` when `fn` settles: ERROR with the
 * exception recorded when it throws (rethrown unchanged).
 */
async function runInSpan<T>(parentContext: Context, span: Span, fn: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parentContext, span), fn)
  } catch (error) {
    span.recordException(error as Error)
    // A low-cardinality class of the error: its SQLSTATE or errno code, else its name.
    span.setAttribute(SEMCONV.errorType, errorCode(error) || (error instanceof Error ? error.name : '_OTHER'))
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message })
    throw error
  } finally {
    span.end()
  }
}

/**
 * Runs `fn` (one inbox transaction of `handler` for `message`, delivered on `queue` with `delivery`)
 * inside a consumer span `process {exchange}:{routing key}:{queue}` (kind CONSUMER), a child of the
 * message's traceparent (the producer span), and ends it when `fn` settles: ERROR with the exception
 * and `error.type` when it throws. Everything `fn` does, its queries and its enqueues, runs in the
 * span's context, so follow-up events continue the trace.
 */
export function inConsumerSpan<T>(
  handler: string,
  queue: string,
  message: ConsumedMessage,
  delivery: { exchange: string; deliveryTag: number | undefined },
  fn: () => Promise<T>,
): Promise<T> {
  const parent = extracted({ traceparent: message.traceparent, tracestate: message.tracestate })
  const destination = rabbitDestination(delivery.exchange, message.routingKey, queue)
  const span = tracer().startSpan(`process ${destination}`, { kind: SpanKind.CONSUMER }, parent)
  if (span.isRecording()) {
    setRabbitAttributes(span, 'process', destination)
    span.setAttributes({
      [SEMCONV.routingKey]: message.routingKey,
      ...(delivery.deliveryTag === undefined ? {} : { [SEMCONV.deliveryTag]: delivery.deliveryTag }),
      [SEMCONV.messageId]: message.id,
      [SEMCONV.conversationId]: message.correlationId,
      [OWN.handler]: handler,
      [OWN.attempt]: message.attempt,
    })
  }
  return runInSpan(parent, span, fn)
}

/**
 * Runs `fn` (one statement that records a batch of deliveries of `queue`) inside one consumer span
 * `process {exchange}:{queue}` (kind CONSUMER), the root of a trace of its own, with a link to each
 * message's context, as OpenTelemetry's messaging conventions ask of batch processing. Without an
 * SDK the links are never built and nothing is allocated per message.
 */
export function inBatchConsumerSpan<T>(
  target: { recorder: string; exchange: string; queue: string },
  messages: readonly ConsumedMessage[],
  fn: () => Promise<T>,
): Promise<T> {
  const links: Link[] = []
  if (propagation.fields().length > 0) {
    for (const message of messages) {
      if (!message.traceparent) continue
      const carrier = { traceparent: message.traceparent, tracestate: message.tracestate }
      const linked = trace.getSpanContext(extracted(carrier))
      if (linked) links.push({ context: linked, attributes: { [SEMCONV.messageId]: message.id } })
    }
  }
  const destination = rabbitDestination(target.exchange, undefined, target.queue)
  const span = tracer().startSpan(`process ${destination}`, { kind: SpanKind.CONSUMER, links }, ROOT_CONTEXT)
  if (span.isRecording()) {
    setRabbitAttributes(span, 'process', destination)
    span.setAttributes({
      [SEMCONV.batchCount]: messages.length,
      [OWN.handler]: target.recorder,
    })
  }
  return runInSpan(ROOT_CONTEXT, span, fn)
}
