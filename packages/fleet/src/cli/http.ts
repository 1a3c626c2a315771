import type { CliSettings } from './settings.js'

/**
 * Why a request got no HTTP answer, in a few words: the network cause of a failed `fetch`
 * (`connect ECONNREFUSED 127.0.0.1:3001`) rather than undici's bare "fetch failed", or
 * `no answer within 5000 ms` when `AbortSignal.timeout` fired.
 */
export function noAnswerReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms`
  if (error instanceof Error) {
    const cause: unknown = error.cause
    if (cause instanceof Error && cause.message) return cause.message
    const code = (cause as { code?: unknown } | undefined)?.code
    if (typeof code === 'string') return code
    return error.message
  }
  return String(error)
}

/**
 * The one message every command prints when the order service does not answer:
 * `the order service at http://127.0.0.1:3001 did not answer (connect ECONNREFUSED 127.0.0.1:3001);
 * is the fleet running (npm start)?`.
 */
export function orderServiceUnreachable(orderUrl: string, reason: string): string {
  return `the order service at ${orderUrl} did not answer (${reason}); is the fleet running (npm start)?`
}

/** Thrown by `callOrderService` when the order service gives no HTTP answer; its message is the one above. */
export class OrderServiceUnreachable extends Error {
  constructor(orderUrl: string, reason: string) {
    super(orderServiceUnreachable(orderUrl, reason))
    this.name = 'OrderServiceUnreachable'
  }
}

/**
 * The CLI's one way to call the order service: `fetch` of `settings.orderUrl` + `path` (e.g.
 * `/orders/<id>`) with a timeout. Any HTTP answer, 4xx and 5xx included, is returned for the caller to
 * judge.
 * @throws OrderServiceUnreachable when there is no answer (refused, reset, DNS, or `timeoutMs` passed)
 */
export async function callOrderService(
  settings: CliSettings,
  path: string,
  { timeoutMs = 10_000, ...init }: RequestInit & { timeoutMs?: number } = {},
): Promise<Response> {
  try {
    return await fetch(`${settings.orderUrl}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    throw new OrderServiceUnreachable(settings.orderUrl, noAnswerReason(error, timeoutMs))
  }
}

/** What `probeHealth` found: an HTTP answer (any status), or none and why. */
export type HealthSeen = { answering: true; status: number } | { answering: false; reason: string }

/**
 * `GET <baseUrl>/health/live` with a short timeout: whether the service's process answers at all.
 * Any HTTP status counts as an answer (a 503 is a running process saying it is unwell).
 * Never throws.
 */
export async function probeHealth(baseUrl: string, timeoutMs = 2_000): Promise<HealthSeen> {
  try {
    const res = await fetch(`${baseUrl}/health/live`, { signal: AbortSignal.timeout(timeoutMs) })
    await res.body?.cancel().catch(() => undefined)
    return { answering: true, status: res.status }
  } catch (error) {
    return { answering: false, reason: noAnswerReason(error, timeoutMs) }
  }
}
