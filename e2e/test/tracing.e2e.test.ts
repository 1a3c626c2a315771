import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { sagaFacts, sagaMap, type Reaction } from '@saga/contracts'
import { afterAll, describe, expect, it } from 'vitest'
import { getOrder, orderBody, placeOrder, setStock } from '../src/api.js'
import { blackHole, OtlpReceiver, SpanKind, type ReceivedSpan } from '../src/otlp-receiver.js'
import { SERVICES, type ServiceName } from '../src/run.js'
import { useScenario } from '../src/scenario.js'
import type { TappedMessage } from '@saga/testkit'
import { eventually } from '../src/wait.js'

const receiver = await OtlpReceiver.start()

/** Every service loads the SDK the way npm start and the image do, exporting OTLP/JSON to the receiver. */
const tracing = (endpoint: string): Record<string, string> => ({
  NODE_OPTIONS: '--import @saga/service-kit/telemetry',
  OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  // Export within 100 ms of a span's end instead of 5 s, so the test waits less.
  OTEL_BSP_SCHEDULE_DELAY: '100',
  // The handlers' success lines are at debug (performance.md, lever 4); the log-correlation check
  // below reads payment's line about the order.
  LOG_LEVEL: 'debug',
})

const env = Object.fromEntries(SERVICES.map((s) => [s, tracing(receiver.endpoint)])) as Record<
  ServiceName,
  Record<string, string>
>

const hex = (bytes: number): string => randomBytes(bytes).toString('hex')
const messageIdOf = (span: ReceivedSpan): unknown => span.attributes['messaging.message.id']

/** What the receiver holds, for a failure message. */
const summary = (): string => {
  const counts = new Map<string, number>()
  for (const span of receiver.spans) {
    const key = `${span.service}/${span.kind}/${span.name}`
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  return `${receiver.spans.length} spans received: ${JSON.stringify(Object.fromEntries(counts))}`
}

/** True when `ancestor` is `span` or one of its parents, following parent ids within `spans`. */
function descendsFrom(span: ReceivedSpan, ancestor: ReceivedSpan, spans: ReceivedSpan[]): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  for (let at: ReceivedSpan | undefined = span; at; at = byId.get(at.parentSpanId)) {
    if (at.spanId === ancestor.spanId) return true
  }
  return false
}

/**
 * The handlers of the saga map that take `routingKey` and run a consumer span per message. A batch
 * recorder (`recorder: true`) writes many deliveries in one statement: it makes one span per batch,
 * in a trace of its own, linked to each message's producer span (`recordedReactions`).
 */
const tracedReactions = (routingKey: string) =>
  sagaMap.filter((r) => r.reactsTo.routingKey === routingKey && r.recorder !== true)
const recordedReactions = (routingKey: string) =>
  sagaMap.filter((r) => r.reactsTo.routingKey === routingKey && r.recorder === true)

/** True when `span` is a consumer span, not failed, of `reaction`'s handler in its service. */
const isHandlerSpan = (span: ReceivedSpan, reaction: Reaction): boolean =>
  span.kind === SpanKind.consumer &&
  span.status !== 2 &&
  span.service === reaction.service &&
  span.attributes['saga_messaging.handler'] === reaction.handler

describe('scenario: one order is one trace', () => {
  const s = useScenario('scenario (tracing)', { env })
  afterAll(() => receiver.stop())

  /** Places an order under a caller's traceparent; returns the order id, trace id and caller span id. */
  const placeTraced = async (body: ReturnType<typeof orderBody>) => {
    const traceId = hex(16)
    const callerSpanId = hex(8)
    const { order } = await placeOrder(s.fleet.one('order').url, body, {
      traceparent: `00-${traceId}-${callerSpanId}-01`,
    })
    return { orderId: order.id, traceId, callerSpanId }
  }

  /**
   * Waits until the receiver holds, for every message of the order the tap saw, its producer span
   * and the consumer span of every handler the saga map lists for it; returns them.
   */
  const spansOf = async (messages: TappedMessage[]) =>
    eventually(
      'a producer span per message and a consumer span per handler',
      () => {
        const producers = new Map<string, ReceivedSpan>()
        const consumers = new Map<string, ReceivedSpan>()
        for (const m of messages) {
          const producer = receiver.spans.find(
            (x) => x.kind === SpanKind.producer && messageIdOf(x) === m.messageId,
          )
          if (!producer) throw new Error(`no producer span for ${m.routingKey} ${m.messageId}; ${summary()}`)
          producers.set(m.messageId!, producer)
          for (const reaction of tracedReactions(m.routingKey)) {
            const consumer = receiver.spans.find(
              (x) => isHandlerSpan(x, reaction) && messageIdOf(x) === m.messageId,
            )
            if (!consumer)
              throw new Error(`no consumer span of ${reaction.handler} for ${m.messageId}; ${summary()}`)
            consumers.set(`${m.messageId!} ${reaction.handler}`, consumer)
          }
        }
        // A recorder's batch span links the producer span of each message it recorded.
        const batches = new Map<string, ReceivedSpan>()
        for (const m of messages) {
          for (const reaction of recordedReactions(m.routingKey)) {
            const producer = producers.get(m.messageId!)!
            const batch = receiver.spans.find(
              (x) => isHandlerSpan(x, reaction) && x.links.some((link) => link.spanId === producer.spanId),
            )
            if (!batch)
              throw new Error(`no batch span of ${reaction.handler} links ${m.messageId}; ${summary()}`)
            batches.set(`${m.messageId!} ${reaction.handler}`, batch)
          }
        }
        return { producers, consumers, batches }
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    )

  /** The trace assertions shared by both stories. */
  const expectOneTrace = async (orderId: string, traceId: string, callerSpanId: string, chain: string[]) => {
    for (const key of chain) {
      await s.fleet.tap!.waitFor((m) => m.correlationId === orderId && m.routingKey === key, 30_000, key)
    }
    const messages = s.fleet.tap!.chain(orderId)
    expect(messages.map((m) => m.routingKey).sort()).toEqual([...chain].sort())
    const { producers, consumers, batches } = await spansOf(messages)
    const spans = receiver.trace(traceId)

    // POST /orders continued the caller's trace: the order service's server span is its child.
    const server = spans.find((x) => x.service === 'order' && x.kind === SpanKind.server)
    expect(server?.parentSpanId).toBe(callerSpanId)

    for (const m of messages) {
      const producer = producers.get(m.messageId!)!
      expect(producer.traceId, `publish ${m.routingKey}`).toBe(traceId)
      // The producer span is a child of where the row was written: the POST for the first fact,
      // else the consumer span of the handler that enqueued it in reaction to its cause.
      const causationId = (m.body as { causationid?: string }).causationid
      const writer = causationId
        ? [...consumers.entries()].find(
            ([key, span]) => key.startsWith(`${causationId} `) && span.service === producer.service,
          )?.[1]
        : server
      expect(writer, `the span that wrote ${m.routingKey}`).toBeDefined()
      expect(descendsFrom(producer, writer!, spans), `${m.routingKey} descends from its writer`).toBe(true)
      for (const reaction of tracedReactions(m.routingKey)) {
        const consumer = consumers.get(`${m.messageId!} ${reaction.handler}`)!
        expect(consumer.traceId, reaction.handler).toBe(traceId)
        expect(consumer.parentSpanId, `${reaction.handler} is a child of publish ${m.routingKey}`).toBe(
          producer.spanId,
        )
      }
      for (const reaction of recordedReactions(m.routingKey)) {
        const batch = batches.get(`${m.messageId!} ${reaction.handler}`)!
        // Its own trace (a batch has many parents), linked to this message's trace and producer span.
        expect(batch.parentSpanId, reaction.handler).toBe('')
        expect(batch.links, `${reaction.handler} links publish ${m.routingKey}`).toContainEqual({
          traceId,
          spanId: producer.spanId,
          attributes: { 'messaging.message.id': m.messageId },
        })
        expect(batch.attributes['messaging.batch.message_count']).toBeGreaterThanOrEqual(1)
      }
    }
    expect(
      messages.filter((m) => recordedReactions(m.routingKey).length > 0).length,
      'the order recorder records some of these facts',
    ).toBeGreaterThan(0)
    return { spans, consumers }
  }

  it('when an order is confirmed, then POST, every publish and every handler of its saga are one trace with correct parents', async () => {
    await setStock(s.fleet.one('inventory').url, 'E2E-TRACE-MUG', 5)
    const { orderId, traceId, callerSpanId } = await placeTraced(
      orderBody([{ sku: 'E2E-TRACE-MUG', quantity: 1, unitPrice: 900 }]),
    )
    const { spans } = await expectOneTrace(orderId, traceId, callerSpanId, sagaFacts())
    expect((await getOrder(s.fleet.one('order').url, orderId)).status).toBe('CONFIRMED')
    // Log correlation: the payment handler's log line about this order carries the trace id.
    const paymentLines = fs
      .readFileSync(s.fleet.one('payment').logFile, 'utf8')
      .split('\n')
      .filter((line) => line.includes(orderId))
    expect(paymentLines.some((line) => line.includes(`"trace_id":"${traceId}"`))).toBe(true)
    // The handlers' SQL is traced too (pg instrumentation), inside the same trace.
    expect(
      new Set(
        spans
          .filter(
            (x) =>
              x.attributes['db.system'] === 'postgresql' || x.attributes['db.system.name'] === 'postgresql',
          )
          .map((x) => x.service),
      ),
    ).toEqual(new Set(SERVICES))
  })

  it('when shipping fails, then the cancellation and every compensation stay in the order trace', async () => {
    await setStock(s.fleet.one('inventory').url, 'E2E-TRACE-GLOBE', 5)
    const { orderId, traceId, callerSpanId } = await placeTraced(
      orderBody([{ sku: 'E2E-TRACE-GLOBE', quantity: 1 }], { country: 'AQ' }),
    )
    await expectOneTrace(orderId, traceId, callerSpanId, sagaFacts('shipment'))
    expect((await getOrder(s.fleet.one('order').url, orderId)).status).toBe('CANCELLED')
  })

  it('when the order service exporter hangs, then orders still confirm and only that service loses its spans', async () => {
    const hole = await blackHole()
    try {
      await s.fleet.one('order').restart(tracing(hole.endpoint))
      await setStock(s.fleet.one('inventory').url, 'E2E-TRACE-PEN', 5)
      const { orderId, traceId } = await placeTraced(
        orderBody([{ sku: 'E2E-TRACE-PEN', quantity: 1, unitPrice: 300 }]),
      )
      await s.fleet.tap!.waitFor(
        (m) => m.correlationId === orderId && m.routingKey === 'order.confirmed',
        60_000,
        'order.confirmed',
      )
      expect((await getOrder(s.fleet.one('order').url, orderId)).status).toBe('CONFIRMED')
      // The context still travelled through the order service: the downstream spans carry the
      // caller's trace id, while the order service's own spans never arrived.
      const created = await s.fleet.tap!.waitFor(
        (m) => m.correlationId === orderId && m.routingKey === 'order.created',
        5_000,
      )
      const payment = await eventually(
        'the payment handler span of the order',
        () =>
          receiver.spans.find(
            (x) =>
              x.kind === SpanKind.consumer && x.service === 'payment' && messageIdOf(x) === created.messageId,
          ),
        { timeoutMs: 30_000, intervalMs: 200 },
      )
      expect(payment.traceId).toBe(traceId)
      expect(receiver.trace(traceId).filter((x) => x.service === 'order')).toEqual([])
    } finally {
      await hole.stop()
    }
  })
})
