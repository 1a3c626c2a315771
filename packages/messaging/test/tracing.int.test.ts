/**
 * The spans messaging makes, checked attribute by attribute against OpenTelemetry's semantic
 * conventions for RabbitMQ (the names are taken from @opentelemetry/semantic-conventions, not
 * typed again here), with an SDK registered for this file only.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base'
import {
  ATTR_ERROR_TYPE,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_MESSAGE_CONVERSATION_ID,
  ATTR_MESSAGING_MESSAGE_ID,
  ATTR_MESSAGING_OPERATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM_NAME,
  ATTR_RABBITMQ_DESTINATION_ROUTING_KEY,
  ATTR_RABBITMQ_MESSAGE_DELIVERY_TAG,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  MESSAGING_SYSTEM_NAME_VALUE_RABBITMQ,
} from '@opentelemetry/semantic-conventions/incubating'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AMQP_URL } from '@saga/testkit'
import { createMessaging, type Messaging } from '../src/messaging.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { OWN, SEMCONV } from '../src/tracing.js'
import { createInboxFixture, recordingHandler, type InboxFixture, type Tx } from './inbox-fixture.js'

const exporter = new InMemorySpanExporter()
let fixture: InboxFixture
let messaging: Messaging<Tx>

beforeAll(async () => {
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  trace.setGlobalTracerProvider(provider)
  fixture = await createInboxFixture('tracing')
  fixture.adopt('traced')
  let failOnce = true
  const handler = recordingHandler('traced', () => {
    if (!failOnce) return
    failOnce = false
    throw Object.assign(new Error('deadlock detected'), { code: '40P01' })
  })
  messaging = createMessaging<Tx>({
    service: 'tracing-test',
    pool: fixture.db.pool,
    amqpUrl: AMQP_URL,
    exchange: fixture.exchange,
    queuePrefix: fixture.prefix,
    handlers: [handler],
    relay: { retentionIntervalMs: 0 },
    consumer: { retryBaseMs: 20, retryMaxMs: 50, transientRetryMaxMs: 0 },
  })
  await messaging.start()
})

afterAll(async () => {
  await messaging?.stop()
  await fixture?.cleanup()
  trace.disable()
  propagation.disable()
  context.disable()
})

const spansOf = (messageId: string): ReadableSpan[] =>
  exporter.getFinishedSpans().filter((span) => span.attributes[ATTR_MESSAGING_MESSAGE_ID] === messageId)

describe('messaging spans and the semantic conventions', () => {
  it('when our attribute names are compared with the conventions package, then they are its current names', () => {
    expect(SEMCONV).toMatchObject({
      system: ATTR_MESSAGING_SYSTEM_NAME,
      operationType: ATTR_MESSAGING_OPERATION_TYPE,
      operationName: ATTR_MESSAGING_OPERATION_NAME,
      destination: ATTR_MESSAGING_DESTINATION_NAME,
      routingKey: ATTR_RABBITMQ_DESTINATION_ROUTING_KEY,
      deliveryTag: ATTR_RABBITMQ_MESSAGE_DELIVERY_TAG,
      messageId: ATTR_MESSAGING_MESSAGE_ID,
      conversationId: ATTR_MESSAGING_MESSAGE_CONVERSATION_ID,
      serverAddress: ATTR_SERVER_ADDRESS,
      serverPort: ATTR_SERVER_PORT,
      errorType: ATTR_ERROR_TYPE,
    })
    // Our own attributes stay out of OpenTelemetry's namespaces.
    for (const name of Object.values(OWN)) expect(name).toMatch(/^saga_messaging\./)
  })

  it('when a message is published and consumed (once failing), then the publish and process spans carry the conventions, and the failed attempt its error.type', async () => {
    const handled = messaging.signals.waitFor('handled', undefined, 30_000)
    const id = await messaging.transaction((tx) =>
      enqueue(tx, {
        type: 'test.happened.v1',
        routingKey: 'test.happened',
        payload: { n: 1 },
        correlationId: 'order-9',
      }),
    )
    await handled
    const spans = spansOf(id)
    const broker = new URL(AMQP_URL)

    const publish = spans.find((span) => span.kind === SpanKind.PRODUCER)
    expect(publish?.name).toBe(`publish ${fixture.exchange}:test.happened`)
    expect(publish?.attributes).toEqual({
      [ATTR_MESSAGING_SYSTEM_NAME]: MESSAGING_SYSTEM_NAME_VALUE_RABBITMQ,
      [ATTR_MESSAGING_OPERATION_TYPE]: 'send',
      [ATTR_MESSAGING_OPERATION_NAME]: 'publish',
      [ATTR_MESSAGING_DESTINATION_NAME]: `${fixture.exchange}:test.happened`,
      [ATTR_RABBITMQ_DESTINATION_ROUTING_KEY]: 'test.happened',
      [ATTR_MESSAGING_MESSAGE_ID]: id,
      [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: 'order-9',
      [ATTR_SERVER_ADDRESS]: broker.hostname,
      [ATTR_SERVER_PORT]: Number(broker.port || 5672),
    })

    const processes = spans.filter((span) => span.kind === SpanKind.CONSUMER)
    const queue = fixture.queue('traced')
    expect(processes.map((span) => span.name)).toEqual([
      `process ${fixture.exchange}:test.happened:${queue}`,
      `process ${fixture.exchange}:test.happened:${queue}`,
    ])
    const [failed, succeeded] = processes
    for (const span of processes) {
      expect(span.parentSpanContext?.spanId).toBe(publish?.spanContext().spanId)
      expect(span.attributes).toMatchObject({
        [ATTR_MESSAGING_SYSTEM_NAME]: MESSAGING_SYSTEM_NAME_VALUE_RABBITMQ,
        [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
        [ATTR_MESSAGING_OPERATION_NAME]: 'process',
        [ATTR_MESSAGING_DESTINATION_NAME]: `${fixture.exchange}:test.happened:${queue}`,
        [ATTR_RABBITMQ_DESTINATION_ROUTING_KEY]: 'test.happened',
        [ATTR_MESSAGING_MESSAGE_ID]: id,
        [ATTR_MESSAGING_MESSAGE_CONVERSATION_ID]: 'order-9',
        [OWN.handler]: 'traced',
      })
      expect(span.attributes[ATTR_RABBITMQ_MESSAGE_DELIVERY_TAG]).toEqual(expect.any(Number))
    }
    expect(failed?.status.code).toBe(SpanStatusCode.ERROR)
    expect(failed?.attributes[ATTR_ERROR_TYPE]).toBe('40P01')
    expect(failed?.attributes[OWN.attempt]).toBe(1)
    expect(succeeded?.status.code).not.toBe(SpanStatusCode.ERROR)
    expect(succeeded?.attributes[ATTR_ERROR_TYPE]).toBeUndefined()
    expect(succeeded?.attributes[OWN.attempt]).toBe(2)
    // No attribute of the old conventions (messaging.system, messaging.rabbitmq.*) and none invented in theirs.
    const names = spans.flatMap((span) => Object.keys(span.attributes))
    expect(
      names.filter((name) => name === 'messaging.system' || name.startsWith('messaging.rabbitmq.')),
    ).toEqual([])
  })
})
