import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { MessagingStatusSource } from './messaging-status.js'

/** Options of `metricsPlugin`. */
export interface MetricsOptions {
  /** Added as the `service` label to every series. */
  service: string
  /** When given, its `metrics()` snapshot is exported under `saga_messaging_*` at every scrape. */
  messaging?: MessagingStatusSource | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry (one per app, so tests can build many apps in one process). */
    metricsRegistry: Registry
  }
}

const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^a-zA-Z0-9_]/g, '_')
    .toLowerCase()

/** Flattens numeric leaves: `{ relay: { publishedTotal: 3 } }` -> `[['relay_published_total', 3]]`. */
export function numericLeaves(value: unknown, prefix = ''): Array<[string, number]> {
  if (typeof value === 'number' && Number.isFinite(value)) return [[prefix, value]]
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return []
  return Object.entries(value).flatMap(([key, inner]) =>
    numericLeaves(inner, prefix ? `${prefix}_${snake(key)}` : snake(key)),
  )
}

/**
 * A snapshot key as a Prometheus series: `*_ms` becomes `*_seconds` (value / 1000, Prometheus base
 * units), `*_total` becomes a counter, everything else a gauge.
 */
export function seriesOf(
  key: string,
  value: number,
): { name: string; kind: 'counter' | 'gauge'; value: number } {
  const name = `saga_messaging_${key}`
  if (name.endsWith('_ms'))
    return { name: `${name.slice(0, -3)}_seconds`, kind: 'gauge', value: value / 1000 }
  return { name, kind: name.endsWith('_total') ? 'counter' : 'gauge', value }
}

function messagingCollector(registry: Registry, messaging: MessagingStatusSource) {
  const series = new Map<string, Counter | Gauge>()
  return () => {
    for (const [key, raw] of numericLeaves(messaging.metrics())) {
      const { name, kind, value } = seriesOf(key, raw)
      let metric = series.get(name)
      if (!metric) {
        const help = `@saga/messaging ${key}`
        metric =
          kind === 'counter'
            ? new Counter({ name, help, registers: [registry] })
            : new Gauge({ name, help, registers: [registry] })
        series.set(name, metric)
      }
      // Messaging owns the running totals; the collector mirrors the latest snapshot.
      metric.reset()
      if (metric instanceof Counter) metric.inc(value)
      else metric.set(value)
    }
  }
}

/**
 * `GET /metrics` in Prometheus text format: prom-client's default process metrics, an
 * `http_request_duration_seconds` histogram by method/route/status, and the messaging snapshot.
 */
export const metricsPlugin = fp(
  (app: FastifyInstance, opts: MetricsOptions) => {
    const registry = new Registry()
    registry.setDefaultLabels({ service: opts.service })
    collectDefaultMetrics({ register: registry })
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
    const collectMessaging = opts.messaging ? messagingCollector(registry, opts.messaging) : undefined
    app.decorate('metricsRegistry', registry)

    app.addHook('onResponse', (request, reply, done) => {
      // The route pattern, not the URL, so ids do not explode the label cardinality.
      const route = request.routeOptions.url ?? 'unmatched'
      duration.observe(
        { method: request.method, route, status_code: reply.statusCode },
        reply.elapsedTime / 1000,
      )
      done()
    })

    app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
      collectMessaging?.()
      return reply.type(registry.contentType).send(await registry.metrics())
    })
  },
  { name: 'metrics', fastify: '5.x' },
)
