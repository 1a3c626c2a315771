/**
 * What messaging's tracing costs per message when no OpenTelemetry SDK is registered (the default:
 * no OTEL_EXPORTER_OTLP_ENDPOINT). Run: `npx tsx bench/tracing-cost.ts` in packages/messaging.
 * Prints ns per message for enqueue's context capture plus the relay's producer span, and for the
 * consumer span around a transaction (over a bare await of the same function).
 */
import { activeTraceCarrier, endProducerSpan, inConsumerSpan, startProducerSpan } from '../src/tracing.js'

const N = 1_000_000
const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
const message = {
  id: 'id',
  type: 't',
  source: 's',
  time: new Date(0),
  correlationId: 'c',
  traceparent,
  routingKey: 'k',
  payload: {},
  attempt: 1,
}
const delivery = { exchange: 'x', deliveryTag: 1 }
const row = {
  id: 'id',
  type: 't',
  routing_key: 'order.created',
  payload: {},
  headers: { correlationId: 'c', traceparent },
  aggregate_id: null,
  occurred_at: new Date(0),
  attempts: 0,
}
const broker = { address: '127.0.0.1', port: 5672 }
const transaction = (): Promise<number> => Promise.resolve(1)
const nsPer = (started: bigint): number => Number(process.hrtime.bigint() - started) / N

for (let round = 1; round <= 3; round++) {
  let started = process.hrtime.bigint()
  for (let i = 0; i < N; i++) {
    activeTraceCarrier()
    endProducerSpan(startProducerSpan(row, 'x', broker).span)
  }
  const producer = nsPer(started)
  started = process.hrtime.bigint()
  for (let i = 0; i < N; i++) await inConsumerSpan('h', 'q', message, delivery, transaction)
  const consumer = nsPer(started)
  started = process.hrtime.bigint()
  for (let i = 0; i < N; i++) await transaction()
  const bare = nsPer(started)
  console.log(
    `round ${round}: enqueue + producer span ${producer.toFixed(0)} ns/message; consumer span ${(consumer - bare).toFixed(0)} ns/transaction`,
  )
}
