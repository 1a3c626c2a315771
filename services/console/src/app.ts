import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import { createServiceApp } from '@saga/service-kit'
import type { Config } from './config.js'
import { readFleet, type FleetSnapshot } from './fleet.js'
import { Poller } from './poller.js'
import { actionRoutes } from './routes/actions.js'
import { bulkRoutes } from './routes/bulk.js'
import { orderedKeyRoutes } from './routes/ordered-keys.js'
import { fleetRoutes } from './routes/fleet.js'
import { orderRoutes } from './routes/orders.js'
import { readerGuard, sessionRoutes } from './routes/session.js'
import { uiRoutes } from './routes/ui.js'
import { SessionStore } from './session.js'
import { createUpstream } from './upstream.js'

/** Where `npm run build` puts the UI: `dist/ui` of this package (from src/ and from dist/ alike). */
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../dist/ui/', import.meta.url))

/** What tests may change in `buildApp`. */
export interface BuildAppOptions {
  /** The built UI's folder; default `DEFAULT_UI_DIR`. */
  uiDir?: string | undefined
  /** Heartbeat of idle SSE streams, ms (default 15 s). */
  heartbeatMs?: number | undefined
  /** fastify's logger off, for tests. */
  logger?: false | undefined
}

/**
 * The console: fastify with the fleet's defaults (logs, request ids, the one error shape), the one
 * fleet poller, the API (`/api/fleet`, `/api/live`, `/api/orders`, `/api/orders/:id`, `/api/actions`, `/api/bulk`,
 * `/api/session`), its own health probes and the built UI. It reads the services over HTTP only.
 */
export async function buildApp(config: Config, options: BuildAppOptions = {}) {
  const app = await createServiceApp({
    service: 'console',
    logLevel: config.LOG_LEVEL,
    logFormat: config.LOG_FORMAT,
    fastify: {
      trustProxy: config.CONSOLE_TRUST_PROXY,
      ...(options.logger === false ? { logger: false } : {}),
    },
  })
  await app.register(cookie)
  const upstream = createUpstream({
    urls: config.serviceUrls,
    timeoutMs: config.CONSOLE_UPSTREAM_TIMEOUT_MS,
    token: config.ADMIN_TOKEN,
  })
  const poller = new Poller<FleetSnapshot>({
    read: (seq, previous) =>
      readFleet({ upstream, urls: config.serviceUrls, pollMs: config.CONSOLE_POLL_MS }, seq, previous),
    intervalMs: config.CONSOLE_POLL_MS,
    onError: (error) => app.log.error({ err: error }, 'fleet poll failed'),
  })
  app.addHook('onClose', (_app, done) => {
    poller.close()
    done()
  })
  const sessions = new SessionStore()
  const token = config.ADMIN_TOKEN

  // The console depends on nothing to serve its pages: a service down is shown, not a reason to restart.
  const probe = { schema: { hide: true }, logLevel: 'warn' } as const
  app.get('/health/live', probe, (_request, reply) => reply.send({ status: 'live', checks: {} }))
  app.get('/health/ready', probe, (_request, reply) => reply.send({ status: 'ready', checks: {} }))

  app.addHook('onRequest', readerGuard(sessions, config.CONSOLE_VIEWER_TOKEN !== undefined))
  await app.register(fleetRoutes, { poller, heartbeatMs: options.heartbeatMs })
  await app.register(orderRoutes, {
    upstream,
    traceUrlTemplate: config.TRACE_URL_TEMPLATE ?? null,
    // The last poll without waiting on a new one (refreshed beside it), so an order's page never
    // pays for the fleet's probes; older than three intervals (nobody watched), a poll is awaited.
    fleet: () => poller.recent(3 * config.CONSOLE_POLL_MS),
  })
  await app.register(sessionRoutes, { sessions, token, viewerToken: config.CONSOLE_VIEWER_TOKEN })
  await app.register(actionRoutes, { upstream, sessions, token })
  await app.register(bulkRoutes, { upstream, sessions, token })
  await app.register(orderedKeyRoutes, { upstream, sessions, token })
  await app.register(uiRoutes, { root: options.uiDir ?? DEFAULT_UI_DIR })
  return app
}
