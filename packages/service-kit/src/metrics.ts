import type { MetricDescriptor } from '@saga/messaging/parts'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Pool } from 'pg'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { registerDatabaseMetrics } from './database-metrics.js'
import { registerDescriptors } from './metric-descriptors.js'

/** Options of `metricsPlugin`. */
export interface MetricsOptions {
  /**
   * Added as the `saga_service` label to every series. Not `service`: Prometheus Operator's
   * ServiceMonitor targets carry a `service` label (the Kubernetes Service) and would rename ours to
   * `exported_service`.
   */
  service: string
  /** Metric descriptors to export as they are (`app.messaging.metrics`: `saga_messaging_*`). */
  metrics?: readonly MetricDescriptor[] | undefined
  /**
   * The pool whose database is reported under `saga_db_*` (see `registerDatabaseMetrics`); default
   * the app's `pool` decoration when the db plugin registered one before.
   */
  database?: Pool | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry (one per app, so tests can build many apps in one process). */
    metricsRegistry: Registry
  }
}

/**
 * `GET /metrics` in Prometheus text format: prom-client's default process metrics, an
 * `http_request_duration_seconds` histogram by method/route/status, the given descriptors, and the
 * database's oldest transaction and dead messaging rows (`registerDatabaseMetrics`), load shedding
 * (`saga_http_overloaded`, `saga_http_requests_shed_total`) when `overloadPlugin` was registered before; every
 * series carries the `saga_service` label. No blank lines between families (prom-client puts one after each).
 */
export const metricsPlugin = fp(
  (app: FastifyInstance, opts: MetricsOptions) => {
    const registry = new Registry()
    registry.setDefaultLabels({ saga_service: opts.service })
    collectDefaultMetrics({ register: registry })
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Duration of HTTP requests in seconds, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    })
    const database = opts.database ?? (app as FastifyInstance & { pool?: Pool }).pool
    if (database) registerDatabaseMetrics(registry, database)
    const stopDescriptors = registerDescriptors(registry, opts.metrics ?? [])
    app.addHook('onClose', (_app, done) => {
      stopDescriptors()
      done()
    })
    const overload = (app as FastifyInstance & { overload?: FastifyInstance['overload'] }).overload
    if (overload) {
      new Gauge({
        name: 'saga_http_overloaded',
        help: 'Whether the service sheds writes at the moment (1) or accepts them (0); see overloadPlugin.',
        registers: [registry],
        collect() {
          this.set(overload.reason() === undefined ? 0 : 1)
        },
      })
      let reported = 0
      new Counter({
        name: 'saga_http_requests_shed_total',
        help: 'Write requests answered 503 + Retry-After because the service was overloaded (overloadPlugin).',
        registers: [registry],
        collect() {
          this.inc(overload.shed - reported)
          reported = overload.shed
        },
      })
    }
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
      const text = await registry.metrics()
      return reply.type(registry.contentType).send(text.replace(/\n{2,}/g, '\n'))
    })
  },
  { name: 'metrics', fastify: '5.x' },
)
