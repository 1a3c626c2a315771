import type { ServiceName } from '@saga/contracts'
import type { MessagingSummary, OrderStats, OrderSummary } from './shapes.js'
import { answerReason, type Answer, type Upstream } from './upstream.js'
import { SERVICE_NAMES } from './config.js'

/** One probe of a service as the poller saw it: the HTTP status, or null and why there was none. */
export interface ProbeState {
  ok: boolean
  status: number | null
  /** Why it is not ok: the timeout, the socket error, or the checks that failed. */
  reason: string | null
  ms: number
}

/** One queue a service consumes, with its counts, as its messaging summary lists it. */
export type QueueFigures = MessagingSummary['queues'][number]

/**
 * A service's queues as the fleet page shows them. `live`: from this poll's summary. `stale`: the
 * summary could not be read this poll, so these are the figures of the last one read (`readAt`),
 * kept in the console's memory because a down service's queue is where its messages wait; the
 * console has no broker connection to count them now. `unknown`: the console has not read the
 * service's summary since it started (`items` empty, `readAt` null).
 */
export interface ServiceQueues {
  state: 'live' | 'stale' | 'unknown'
  /** When the console read these figures: the start of the poll that read them (ISO 8601). */
  readAt: string | null
  items: QueueFigures[]
}

/** One service in the fleet snapshot. */
export interface ServiceSnapshot {
  service: ServiceName
  url: string
  /** down: not live or not answering; degraded: live but not ready, broker down or summary failing. */
  health: 'up' | 'degraded' | 'down'
  reason: string | null
  /**
   * Since when the service has had this health as the console saw it: the start of the first poll
   * that found it so, every poll since agreeing (ISO 8601). A service already down when the
   * console started is down since the console's first poll.
   */
  healthSince: string
  live: ProbeState
  ready: ProbeState
  /** Its `/admin/messaging/summary`, null when it could not be read (`messagingError` says why). */
  messaging: MessagingSummary | null
  messagingError: string | null
  /** Its queues: this poll's, else the last ones read (see `ServiceQueues`). */
  queues: ServiceQueues
}

/** What the poller read of the order service's orders. */
export interface OrdersSnapshot {
  stats: OrderStats | null
  recent: OrderSummary[] | null
  /** Why stats or recent orders are missing. */
  error: string | null
}

/** The fleet now: one poll of every service, pushed to every tab (`GET /api/fleet`, SSE `fleet`). */
export interface FleetSnapshot {
  /** Poll number since the console started (1, 2, ...). */
  seq: number
  /** When the poll started. */
  at: string
  /** How long the poll took, ms. */
  tookMs: number
  pollMs: number
  services: ServiceSnapshot[]
  orders: OrdersSnapshot
}

/** The checks of a health body that are not up, as `database: down (connection refused)`. */
function failedChecks(body: unknown): string | null {
  const checks = (body as { checks?: Record<string, { status?: unknown; error?: unknown }> } | null)?.checks
  if (checks === undefined || typeof checks !== 'object') return null
  const failed = Object.entries(checks)
    .filter(([, check]) => check.status !== 'up')
    .map(([name, check]) => {
      const error = typeof check.error === 'string' ? ` (${check.error})` : ''
      return `${name}: ${String(check.status)}${error}`
    })
  return failed.length === 0 ? null : failed.join('; ')
}

/** A probe's answer as a `ProbeState`: ok on 2xx, else the failed checks or the HTTP status. */
export function probeState(answer: Answer): ProbeState {
  if (answer.kind === 'no-answer') return { ok: false, status: null, reason: answer.reason, ms: answer.ms }
  const ok = answer.status >= 200 && answer.status < 300
  const reason = ok ? null : (failedChecks(answer.body) ?? answerReason(answer.status, answer.body))
  return { ok, status: answer.status, reason, ms: answer.ms }
}

/** Health and its reason from the probes and the messaging summary (see `ServiceSnapshot.health`). */
export function judgeService(
  live: ProbeState,
  ready: ProbeState,
  messaging: MessagingSummary | null,
  messagingError: string | null,
): Pick<ServiceSnapshot, 'health' | 'reason'> {
  if (!live.ok) return { health: 'down', reason: `not live: ${live.reason ?? 'unknown'}` }
  if (!ready.ok) return { health: 'degraded', reason: `not ready: ${ready.reason ?? 'unknown'}` }
  if (messaging === null)
    return { health: 'degraded', reason: `messaging summary: ${messagingError ?? 'unknown'}` }
  if (messaging.broker !== 'connected') return { health: 'degraded', reason: 'broker down' }
  return { health: 'up', reason: null }
}

/**
 * A service's queues after a poll: this poll's summary's when it was read, else the previous
 * snapshot's figures marked stale with the time they were read, else unknown.
 * @param messaging this poll's summary, null when it could not be read
 * @param at when this poll started (ISO 8601)
 * @param previous the service's queues in the previous snapshot; undefined before the first poll
 */
export function carryQueues(
  messaging: MessagingSummary | null,
  at: string,
  previous: ServiceQueues | undefined,
): ServiceQueues {
  if (messaging !== null)
    return { state: 'live', readAt: at, items: Array.isArray(messaging.queues) ? messaging.queues : [] }
  if (previous === undefined || previous.state === 'unknown')
    return { state: 'unknown', readAt: null, items: [] }
  return { state: 'stale', readAt: previous.readAt, items: previous.items }
}

async function readService(
  upstream: Upstream,
  service: ServiceName,
  url: string,
  at: string,
  previous: ServiceSnapshot | undefined,
): Promise<ServiceSnapshot> {
  const [liveAnswer, readyAnswer, summaryAnswer] = await Promise.all([
    upstream.get(service, '/health/live'),
    upstream.get(service, '/health/ready'),
    upstream.get(service, '/admin/messaging/summary'),
  ])
  const live = probeState(liveAnswer)
  const ready = probeState(readyAnswer)
  const summary = probeState(summaryAnswer)
  const messaging =
    summary.ok && summaryAnswer.kind === 'answer' ? (summaryAnswer.body as MessagingSummary) : null
  const messagingError = messaging === null ? summary.reason : null
  const judged = judgeService(live, ready, messaging, messagingError)
  return {
    service,
    url,
    ...judged,
    healthSince: previous?.health === judged.health ? previous.healthSince : at,
    live,
    ready,
    messaging,
    messagingError,
    queues: carryQueues(messaging, at, previous?.queues),
  }
}

async function readOrders(upstream: Upstream, windowSeconds: number): Promise<OrdersSnapshot> {
  const [stats, recent] = await Promise.allSettled([
    upstream.json<OrderStats>('order', `/orders/stats?windowSeconds=${windowSeconds}`),
    upstream.json<{ items: OrderSummary[] }>('order', '/orders?limit=20'),
  ])
  const errors = [stats, recent].flatMap((r) =>
    r.status === 'rejected' ? [String((r.reason as Error).message)] : [],
  )
  return {
    stats: stats.status === 'fulfilled' ? stats.value : null,
    recent: recent.status === 'fulfilled' ? recent.value.items : null,
    error: errors.length === 0 ? null : [...new Set(errors)].join('; '),
  }
}

/** Options of `readFleet`. */
export interface ReadFleetOptions {
  upstream: Upstream
  urls: Readonly<Record<ServiceName, string>>
  pollMs: number
  /** The window of the order stats, s (the chart's span). */
  windowSeconds?: number | undefined
}

/**
 * One poll of the fleet: every service's `/health/live`, `/health/ready` and
 * `/admin/messaging/summary`, and the order service's `/orders/stats` and newest `/orders?limit=20`,
 * all at once. Never throws: a service that fails or times out is in the snapshot as down with the
 * reason, and takes at most the upstream timeout. A service whose summary cannot be read keeps the
 * queues of `previous` (see `ServiceQueues`).
 * @param seq the poll's number
 * @param previous the last snapshot read, whose queue figures a down service keeps; undefined at first
 */
export async function readFleet(
  options: ReadFleetOptions,
  seq: number,
  previous?: FleetSnapshot,
): Promise<FleetSnapshot> {
  const { upstream, urls, pollMs } = options
  const at = new Date()
  const started = performance.now()
  const before = (service: ServiceName) => previous?.services.find((s) => s.service === service)
  const [services, orders] = await Promise.all([
    Promise.all(
      SERVICE_NAMES.map((service) =>
        readService(upstream, service, urls[service], at.toISOString(), before(service)),
      ),
    ),
    readOrders(upstream, options.windowSeconds ?? 300),
  ])
  return {
    seq,
    at: at.toISOString(),
    tookMs: Math.round(performance.now() - started),
    pollMs,
    services,
    orders,
  }
}
