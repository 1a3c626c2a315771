import type { ServiceName } from '@saga/contracts'

/** What one request to a service came to: an HTTP answer (any status), or none with the reason. */
export type Answer =
  | { kind: 'answer'; status: number; body: unknown; ms: number }
  | { kind: 'no-answer'; reason: string; ms: number }

/** A request to a service that did not end in a 2xx: `status` null when the service did not answer. */
export class UpstreamError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly status: number | null,
    /** Why, without the service's name: `unreachable (ECONNREFUSED)`, `HTTP 500: …`. */
    readonly reason: string,
    readonly body: unknown = undefined,
  ) {
    super(`${service}: ${reason}`)
    this.name = 'UpstreamError'
  }
}

/** Who acts in a write to a service: the `x-admin-actor` header's value, and `x-admin-role`'s when given. */
export interface Actor {
  actor: string
  role?: string | undefined
}

/** Options of `createUpstream`. */
export interface UpstreamOptions {
  /** Base URL of each service, e.g. `http://127.0.0.1:3001`. */
  urls: Readonly<Record<ServiceName, string>>
  /** Longest wait for one answer, ms; past it the request is aborted and reported as no answer. */
  timeoutMs: number
  /** ADMIN_TOKEN, sent as `Authorization: Bearer` on writes only; never in a URL, log or response. */
  token?: string | undefined
}

/** The services' HTTP API as the console reads it: GET and POST with one timeout and no retries. */
export interface Upstream {
  /** GET `path` (with its query) of `service`. Never throws: a failure is a `no-answer`. */
  get(service: ServiceName, path: string): Promise<Answer>
  /**
   * GET `path` and return its JSON body when the status is 2xx.
   * @throws UpstreamError with the status and body of any other answer, or the reason of none
   */
  json<T>(service: ServiceName, path: string): Promise<T>
  /**
   * POST `body` as JSON to `path` with the bearer token, `x-admin-actor` and `x-admin-role`; waits
   * `timeoutMs` (default the upstream's) for the answer. Never throws.
   */
  post(service: ServiceName, path: string, body: unknown, by: Actor, timeoutMs?: number): Promise<Answer>
}

/** Why a fetch failed, in a few words: the timeout, or the socket error's code (`ECONNREFUSED`). */
function failureReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `did not answer within ${timeoutMs} ms`
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined
  if (typeof cause?.code === 'string') return `unreachable (${cause.code})`
  if (typeof cause?.message === 'string') return `unreachable (${cause.message})`
  return `unreachable (${error instanceof Error ? error.message : String(error)})`
}

/** The reason a non-2xx answer gives: its status and, when it is the error shape, its message. */
export function answerReason(status: number, body: unknown): string {
  const message = (body as { message?: unknown } | null)?.message
  return typeof message === 'string' ? `HTTP ${status}: ${message}` : `HTTP ${status}`
}

/**
 * The console's one way to the services. Each request is aborted after `timeoutMs` and never
 * retried (the next poll is the retry), so a slow service costs the console one timeout per read and
 * the services never see a storm. Bodies are parsed as JSON when they are JSON, else kept as text.
 */
export function createUpstream({ urls, timeoutMs, token }: UpstreamOptions): Upstream {
  async function send(
    service: ServiceName,
    path: string,
    init: RequestInit,
    waitMs = timeoutMs,
  ): Promise<Answer> {
    const started = performance.now()
    const ms = () => Math.round(performance.now() - started)
    try {
      // Appended, not resolved: a base URL with a path (`http://gateway/order`) keeps it.
      const response = await fetch(`${urls[service].replace(/\/+$/, '')}${path}`, {
        ...init,
        signal: AbortSignal.timeout(waitMs),
      })
      const text = await response.text()
      const isJson = (response.headers.get('content-type') ?? '').includes('json')
      let body: unknown = text
      if (isJson && text !== '') {
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
      }
      return { kind: 'answer', status: response.status, body, ms: ms() }
    } catch (error) {
      return { kind: 'no-answer', reason: failureReason(error, waitMs), ms: ms() }
    }
  }

  const get = (service: ServiceName, path: string) =>
    send(service, path, { headers: { accept: 'application/json' } })

  return {
    get,
    async json<T>(service: ServiceName, path: string): Promise<T> {
      const answer = await get(service, path)
      if (answer.kind === 'no-answer') throw new UpstreamError(service, null, answer.reason)
      if (answer.status < 200 || answer.status > 299)
        throw new UpstreamError(service, answer.status, answerReason(answer.status, answer.body), answer.body)
      return answer.body as T
    },
    post(service, path, body, { actor, role }, waitMs) {
      const headers: Record<string, string> = {
        accept: 'application/json',
        'content-type': 'application/json',
        'x-admin-actor': actor,
      }
      if (role !== undefined) headers['x-admin-role'] = role
      if (token !== undefined) headers.authorization = `Bearer ${token}`
      return send(service, path, { method: 'POST', headers, body: JSON.stringify(body) }, waitMs)
    },
  }
}
