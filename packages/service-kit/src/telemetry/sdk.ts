import { register } from 'node:module'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { onTelemetryShutdown } from './state.js'
import { telemetryDefaults } from './settings.js'

/**
 * Starts the OpenTelemetry Node SDK for a service process, before the app is imported. The SDK
 * reads the standard variables itself (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL
 * `http/protobuf` (default), `http/json` or `grpc`, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER, OTEL_BSP_*; https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 *
 * Instrumentations: fastify through @fastify/otel (the fastify team's; it joins every fastify
 * instance at initialisation and continues an incoming `traceparent`), pg (every query of the pg
 * pools and of Prisma's pg adapter; only under a parent span, so the relay's idle polling makes no
 * root spans), and pino (trace_id, span_id and trace_flags on every log line written in a span).
 * The outbox and inbox make their own producer and consumer spans (@saga/messaging's tracing.ts),
 * so the amqplib instrumentation is not loaded: it would add a second span per publish and per
 * delivery, and its consumer span covers the delivery up to the ack rather than the handler's
 * transaction. Spans are exported in batches by the SDK's BatchSpanProcessor: an exporter that is
 * down drops them after its timeout and never delays a request or a handler.
 */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env, entry = process.argv[1]): void {
  Object.assign(env, telemetryDefaults(env, entry))
  // pg is imported from ESM modules: import-in-the-middle's hook lets the instrumentation patch it.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
  const sdk = new NodeSDK({
    instrumentations: [
      new FastifyOtelInstrumentation({ registerOnInitialization: true }),
      new PgInstrumentation({ requireParentSpan: true }),
      new PinoInstrumentation(),
    ],
  })
  sdk.start()
  onTelemetryShutdown(() => sdk.shutdown())
}
