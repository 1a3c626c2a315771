/**
 * Small fastify apps that answer like the fleet's services in the console contract's shapes (issue
 * 21, parts 1 and 2), on ephemeral ports, counting what they are asked. No database, no broker: the
 * console reads services over HTTP only, so its tests need nothing more.
 */
import { randomUUID } from 'node:crypto'
import { SERVICES, type ServiceName } from '@saga/contracts'
import Fastify, { type FastifyInstance } from 'fastify'
import type { AddressInfo } from 'node:net'

/** One request a stub received. */
export interface Received {
  method: string
  path: string
  query: Record<string, unknown>
  headers: Record<string, unknown>
  body: unknown
}

/** What a stub answers; tests change it between requests. */
export interface StubBehaviour {
  /** Delay before every answer, ms (cut short when the stub closes). */
  delayMs: number
  /** `/health/ready` answers 503 with a failed database check. */
  notReady: boolean
  /** Per path (without query), a body to answer instead of the default (or a status and body). */
  answers: Map<string, { status: number; body: unknown }>
}

/** A running stub service. */
export interface StubService {
  service: ServiceName
  url: string
  app: FastifyInstance
  received: Received[]
  behaviour: StubBehaviour
  /** How many requests reached `path` (without query). */
  count(path: string): number
  close(): Promise<void>
}

/** The data the stubs answer for one order (its facts spread over the four services). */
export interface OrderFixture {
  orderId: string
  /** Message ids: created, processed, failed, cancelled, refunded. */
  ids: { created: string; processed: string; failed: string; cancelled: string; refunded: string }
  deadLetterId: string
  parkedId: string
}

/** A new fixture: an order whose stock reservation failed, so it was cancelled and refunded. */
export function orderFixture(): OrderFixture {
  return {
    orderId: randomUUID(),
    ids: {
      created: randomUUID(),
      processed: randomUUID(),
      failed: randomUUID(),
      cancelled: randomUUID(),
      refunded: randomUUID(),
    },
    deadLetterId: randomUUID(),
    parkedId: randomUUID(),
  }
}

const at = (seconds: number) => new Date(Date.UTC(2026, 11, 1, 12, 0, 0, seconds * 1000)).toISOString()

function record(
  f: OrderFixture,
  id: string,
  type: string,
  cause: string | null,
  s: number,
  state = 'published',
) {
  return {
    id,
    type,
    routingKey: type.replace(/\.v\d+$/, ''),
    aggregateId: f.orderId,
    correlationId: f.orderId,
    causationId: cause,
    // The admin surface's trace id of the row's traceparent: one trace per order here.
    traceId: f.orderId.replaceAll('-', ''),
    state,
    attempts: state === 'parked' ? 10 : 1,
    lastError: state === 'parked' ? 'NO_ROUTE' : null,
    occurredAt: at(s),
    // Published on commit: the consumer (a second later) records it before the relay marks the row.
    publishedAt: state === 'published' ? at(s + 1.5) : null,
    failedAt: state === 'parked' ? at(s + 1) : null,
    payload: { orderId: f.orderId },
    headers: {
      correlationId: f.orderId,
      ...(cause === null ? {} : { causationId: cause }),
      traceparent: `00-${f.orderId.replaceAll('-', '')}-00f067aa0ba902b7-01`,
    },
  }
}

/** What each service's outbox holds for the fixture's order. */
export function recordsOf(f: OrderFixture, service: ServiceName) {
  const { ids } = f
  return {
    order: [
      record(f, ids.created, 'order.created.v1', null, 0),
      record(f, ids.cancelled, 'order.cancelled.v1', ids.failed, 3),
    ],
    payment: [
      record(f, ids.processed, 'payment.processed.v1', ids.created, 1),
      record(f, ids.refunded, 'payment.refunded.v1', ids.failed, 4),
    ],
    inventory: [record(f, ids.failed, 'stock.reservation-failed.v1', ids.processed, 2)],
    shipment: [],
  }[service]
}

/** Which handlers of each service consumed which of the fixture's messages. */
export function inboxOf(f: OrderFixture, service: ServiceName) {
  const { ids } = f
  const rows = {
    order: [
      { messageId: ids.failed, handler: 'cancel-order-when-stock-reservation-failed', receivedAt: at(3) },
    ],
    payment: [
      { messageId: ids.created, handler: 'process-payment-when-order-created', receivedAt: at(1) },
      { messageId: ids.failed, handler: 'refund-payment-when-stock-reservation-failed', receivedAt: at(4) },
    ],
    inventory: [
      { messageId: ids.processed, handler: 'reserve-stock-when-payment-processed', receivedAt: at(2) },
    ],
    shipment: [],
  }[service]
  return rows
}

/** The fixture's order as `GET /orders/:id` answers it. */
export function orderViewOf(f: OrderFixture) {
  const event = (id: string, type: string, source: string, s: number) => ({
    id,
    messageId: id,
    type,
    source,
    occurredAt: at(s),
    recordedAt: at(s),
    note: null,
  })
  return {
    id: f.orderId,
    customerId: randomUUID(),
    status: 'CANCELLED',
    currency: 'EUR',
    total: 1200,
    waitingFor: null,
    cancellationReason: 'stock_unavailable',
    failedStep: 'stock',
    createdAt: at(0),
    updatedAt: at(3),
    deadlineAt: at(600),
    confirmedAt: null,
    cancelledAt: at(3),
    items: [{ sku: 'MUG-001', quantity: 2, unitPrice: 600 }],
    events: [
      event(f.ids.created, 'order.created.v1', 'order', 0),
      event(f.ids.processed, 'payment.processed.v1', 'payment', 1),
      event(f.ids.failed, 'stock.reservation-failed.v1', 'inventory', 2),
      event(f.ids.cancelled, 'order.cancelled.v1', 'order', 3),
      event(f.ids.refunded, 'payment.refunded.v1', 'payment', 4),
    ],
  }
}

function summaryOf(service: ServiceName) {
  return {
    service,
    at: new Date().toISOString(),
    broker: 'connected',
    outbox: { pending: 2, parked: 1, oldestPendingAt: at(0), oldestPendingAgeMs: 1500 },
    queues: [
      {
        handler: `${service}-handler`,
        queue: `${service}.${service}-handler`,
        ready: 0,
        consumers: 1,
        deadLetterQueue: `${service}.${service}-handler.dlq`,
        deadLettered: 3,
      },
    ],
  }
}

function statsOf() {
  return {
    at: new Date().toISOString(),
    byStatus: { PENDING: 4, CONFIRMED: 90, CANCELLED: 6 },
    pendingByStep: { payment: 1, inventory: 2, shipment: 1 },
    pendingOverdue: 0,
    buckets: [{ at: at(0), confirmed: 9, cancelled: 1, latencyP50Ms: 80, latencyP99Ms: 400 }],
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        resolve()
      },
      { once: true },
    )
  })

/** The dead letters of one service for the fixture's order: shipment holds its StockReserved. */
function deadLettersOf(service: ServiceName, fixture: OrderFixture | undefined) {
  const messages =
    fixture && service === 'shipment'
      ? [
          {
            messageId: fixture.deadLetterId,
            type: 'stock.reserved.v1',
            routingKey: 'stock.reserved',
            correlationId: fixture.orderId,
            causationId: fixture.ids.processed,
            aggregateId: fixture.orderId,
            reason: 'handler threw 10 times',
            handler: 'create-shipment-when-stock-reserved',
            deadLetteredAt: at(5),
            payload: {},
          },
        ]
      : []
  return { service, queues: [{ queue: `${service}.q.dlq`, handler: 'h', count: messages.length, messages }] }
}

/** One recorded requeue per fixture (of its dead letter), and one action on nothing of theirs. */
function actionsOf(service: ServiceName, fixtures: OrderFixture[]) {
  const action = (id: string, seconds: number, name: string, target: string, ids: string[]) => ({
    id,
    at: at(seconds),
    actor: 'ops',
    action: name,
    target,
    ids,
    detail: {},
  })
  return {
    service,
    actions: [
      ...fixtures.map((f, i) =>
        action(String(i + 1), 10 + i, 'requeue', `${service}.q.dlq`, [f.deadLetterId]),
      ),
      action('99', 9, 'discard', 'other', [randomUUID()]),
    ],
  }
}

/** The default answer of a messaging admin or health route, undefined for any other path. */
function messagingAnswer(
  service: ServiceName,
  path: string,
  query: Record<string, unknown>,
  fixtures: OrderFixture[],
) {
  const fixture = fixtures.find((f) => f.orderId === query.aggregateId)
  const ok = (body: unknown) => ({ status: 200, body })
  switch (path) {
    case '/health/live':
      return ok({ status: 'live', checks: {} })
    case '/health/ready':
      return ok({ status: 'ready', checks: { database: { status: 'up' } } })
    case '/admin/messaging/summary':
      return ok(summaryOf(service))
    case '/admin/messaging/records':
      return ok({ service, outbox: fixture ? recordsOf(fixture, service) : [] })
    case '/admin/messaging/inbox': {
      const wanted = new Set([query.messageId].flat())
      return ok({
        service,
        inbox: fixtures.flatMap((f) => inboxOf(f, service)).filter((r) => wanted.has(r.messageId)),
      })
    }
    case '/admin/messaging/dead-letters':
      return ok(deadLettersOf(service, fixture))
    case '/admin/messaging/parked': {
      const parked = fixture && service === 'payment'
      const row = () =>
        record(fixture!, fixture!.parkedId, 'payment.refunded.v1', fixture!.ids.failed, 6, 'parked')
      return ok({ service, rows: parked ? [row()] : [] })
    }
    case '/admin/messaging/actions':
      return ok(actionsOf(service, fixtures))
    case '/admin/messaging/ordered-keys':
      // The fleet has no ordered handler: none stuck (tests set a service's keys in `answers`).
      return ok({ service, keys: [] })
    default:
      return undefined
  }
}

/** The default answer of the order service's order routes, undefined for any other path. */
function ordersAnswer(path: string, fixtures: OrderFixture[]) {
  if (path === '/orders/stats') return { status: 200, body: statsOf() }
  if (path === '/orders') {
    const items = fixtures.map((f) => {
      const { events: _e, items: _i, confirmedAt: _c, cancelledAt: _x, ...summary } = orderViewOf(f)
      return summary
    })
    return { status: 200, body: { items, nextCursor: null } }
  }
  const fixture = fixtures.find((f) => path === `/orders/${f.orderId}`)
  if (fixture) return { status: 200, body: orderViewOf(fixture) }
  if (path.startsWith('/orders/'))
    return {
      status: 404,
      body: { error: 'Not Found', message: `Order ${path.slice(8)} not found`, details: [] },
    }
  return undefined
}

/** The default answers of one service for `GET path`, from the fixtures it knows. */
function defaultAnswer(
  service: ServiceName,
  path: string,
  query: Record<string, unknown>,
  fixtures: OrderFixture[],
) {
  return (
    messagingAnswer(service, path, query, fixtures) ??
    (service === 'order' ? ordersAnswer(path, fixtures) : undefined)
  )
}

/** A POST's default answer: the contract's `{ dryRun, actionId, results }`. */
function postAnswer(path: string, body: { messageIds?: string[]; ids?: string[]; dryRun?: boolean }) {
  const dryRun = body.dryRun === true
  if (path.endsWith('/dead-letters/requeue') || path.endsWith('/dead-letters/discard')) {
    const verb = path.endsWith('requeue') ? 'requeue' : 'discard'
    const results = (body.messageIds ?? []).map((messageId) => ({
      messageId,
      outcome: dryRun ? `would-${verb}` : verb === 'requeue' ? 'requeued' : 'discarded',
    }))
    return { status: 200, body: { dryRun, actionId: dryRun ? null : '7', results } }
  }
  if (path.endsWith('/parked/retry')) {
    const results = (body.ids ?? []).map((id) => ({ id, outcome: dryRun ? 'would-retry' : 'retried' }))
    return { status: 200, body: { dryRun, actionId: dryRun ? null : '8', results } }
  }
  if (path.endsWith('/ordered-keys/skip')) {
    const results = [{ outcome: dryRun ? 'would-skip' : 'skipped', from: '3', to: '4', skipped: null }]
    return { status: 200, body: { dryRun, actionId: dryRun ? null : '10', results } }
  }
  if (/^\/admin\/orders\/[^/]+\/cancel$/.test(path))
    return {
      status: 200,
      body: { dryRun, actionId: dryRun ? null : '9', outcome: dryRun ? 'would-cancel' : 'cancelled' },
    }
  return { status: 404, body: { error: 'Not Found', message: `Route POST ${path} not found`, details: [] } }
}

/**
 * Starts one stub service on 127.0.0.1.
 * @param port an ephemeral port when 0; a stopped stub's port to start it again where the console
 *   looks for it
 */
export async function startStub(
  service: ServiceName,
  fixtures: OrderFixture[] = [],
  port = 0,
): Promise<StubService> {
  const app = Fastify({ logger: false })
  const received: Received[] = []
  const behaviour: StubBehaviour = { delayMs: 0, notReady: false, answers: new Map() }
  // A stub told to take minutes must not hold its close (or the test process) that long.
  const closing = new AbortController()
  app.addHook('onRequest', async (request) => {
    if (behaviour.delayMs > 0) await sleep(behaviour.delayMs, closing.signal)
    void request
  })
  app.all('/*', async (request, reply) => {
    const path = request.url.split('?')[0] ?? '/'
    const query = request.query as Record<string, unknown>
    received.push({
      method: request.method,
      path,
      query,
      headers: { ...request.headers },
      body: request.body,
    })
    const override = behaviour.answers.get(path)
    if (path === '/health/ready' && behaviour.notReady)
      return reply
        .code(503)
        .send({ status: 'not ready', checks: { database: { status: 'down', error: 'connection refused' } } })
    const answer =
      override ??
      (request.method === 'POST'
        ? postAnswer(path, request.body ?? {})
        : defaultAnswer(service, path, query, fixtures))
    if (!answer)
      return reply.code(404).send({ error: 'Not Found', message: `Route ${path} not found`, details: [] })
    return reply.code(answer.status).send(answer.body)
  })
  await app.listen({ host: '127.0.0.1', port })
  const { port: bound } = app.server.address() as AddressInfo
  return {
    service,
    url: `http://127.0.0.1:${bound}`,
    app,
    received,
    behaviour,
    count: (path) => received.filter((r) => r.path === path).length,
    close: () => {
      closing.abort()
      return app.close()
    },
  }
}

/** The four stubs of a fleet. */
export interface StubFleet {
  /** A test may replace a stub (one started again on its port); `close` closes the current ones. */
  stubs: Record<ServiceName, StubService>
  /** The console's environment pointing at them. */
  env: Record<string, string>
  close(): Promise<void>
}

/** Starts a stub of every service, all knowing `fixtures`. */
export async function startStubFleet(fixtures: OrderFixture[] = []): Promise<StubFleet> {
  const started = await Promise.all(SERVICES.map((s) => startStub(s, fixtures)))
  const stubs = Object.fromEntries(started.map((s) => [s.service, s])) as Record<ServiceName, StubService>
  return {
    stubs,
    env: {
      ORDER_URL: stubs.order.url,
      PAYMENT_URL: stubs.payment.url,
      INVENTORY_URL: stubs.inventory.url,
      SHIPMENT_URL: stubs.shipment.url,
    },
    close: async () => {
      await Promise.all(Object.values(stubs).map((s) => s.close()))
    },
  }
}

/**
 * A key of inventory's ordered handler blocked by a dead letter (message 4, 7 waiting behind it),
 * as `GET /admin/messaging/ordered-keys` lists it; a stub answers it when a test sets it.
 */
export function blockedOrderedKey() {
  return {
    handler: 'apply-stock-change',
    producer: 'order',
    key: randomUUID(),
    state: 'blocked' as const,
    lastSeq: '3',
    blockedBy: randomUUID(),
    blockedSeq: '4',
    blockedSince: '2026-12-06T10:00:00.000Z',
    reason: 'handler failed after 3 attempts: no such item',
    waiting: 7,
    firstWaiting: '5',
    waitingSince: '2026-12-06T10:00:01.000Z',
  }
}
