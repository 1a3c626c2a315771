import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { HttpError } from '@saga/service-kit'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'

/** The session cookie's name. */
export const SESSION_COOKIE = 'saga_console_session'
/** How long a session lasts after sign-in, ms (8 hours: a working day). */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000
/** Most sessions kept at once; signing in past it ends the oldest. */
const MAX_SESSIONS = 1_000

/**
 * What a person signed in as: a `viewer` reads (CONSOLE_VIEWER_TOKEN), an `operator` reads and acts
 * (ADMIN_TOKEN).
 */
export type Role = 'viewer' | 'operator'

/**
 * Who signed in: the actor named at sign-in, sent to the services as `x-admin-actor`, and the role
 * the token gave, sent as `x-admin-role` and recorded with every action.
 */
export interface Session {
  actor: string
  role: Role
  expiresAt: number
}

/** What an actor may be called: the services' `x-admin-actor` rule. */
export const ACTOR = /^[A-Za-z0-9 ._@-]{1,64}$/

/** Whether `given` is `expected`, in time that does not depend on where they differ (sha-256 of both). */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/**
 * The console's sessions, in memory (a restart signs everyone out). A session id is 32 random bytes
 * (base64url) in an HttpOnly, SameSite=Strict cookie; the admin token stays on the server.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>()

  constructor(private readonly clock: () => number = Date.now) {}

  /** Starts a session for `actor` as `role`. @returns its id, for the cookie */
  create(actor: string, role: Role): string {
    const id = randomBytes(32).toString('base64url')
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value
      if (oldest !== undefined) this.sessions.delete(oldest)
    }
    this.sessions.set(id, { actor, role, expiresAt: this.clock() + SESSION_TTL_MS })
    return id
  }

  /** The live session of `id`, or undefined (an expired one is forgotten). */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined
    const session = this.sessions.get(id)
    if (session === undefined) return undefined
    if (session.expiresAt <= this.clock()) {
      this.sessions.delete(id)
      return undefined
    }
    return session
  }

  /** Ends the session `id` (nothing when there is none). */
  delete(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id)
  }
}

/** The host (and port) of an Origin header, or undefined when it is not a URL (`null`, garbage). */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host
  } catch {
    return undefined
  }
}

/**
 * Refuses a write that a page of another site could have sent: without an `Origin` header naming
 * the host the request was sent to (its Host header) it is a 403. Browsers send Origin on every POST
 * and DELETE. The scheme is not compared, so the check holds behind a proxy that ends TLS.
 * @throws HttpError 403
 */
export function requireSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin
  if (origin === undefined || originHost(origin) !== request.host) {
    throw new HttpError(403, 'Writes must come from the console itself (same-origin Origin header)', [
      { path: 'headers.origin', issue: origin === undefined ? 'is missing' : 'is not the console origin' },
    ])
  }
}

/**
 * Refuses a write whose body is not JSON (415): an HTML form of another site cannot send
 * `application/json` without a CORS preflight the console never answers.
 * @throws HttpError 415
 */
export function requireJson(request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
  if (type !== 'application/json') {
    throw new HttpError(415, 'Send the body as application/json', [
      { path: 'headers.content-type', issue: 'must be application/json' },
    ])
  }
}

/**
 * An `onRequest` hook from checks that throw an HttpError to refuse the request (before its body is
 * read). Example: `onRequest: guard((request) => requireSameOrigin(request))`.
 */
export function guard(check: (request: FastifyRequest) => void): onRequestHookHandler {
  return (request, _reply, done) => {
    try {
      check(request)
      done()
    } catch (error) {
      done(error as Error)
    }
  }
}

/** Sets the session cookie: HttpOnly, SameSite=Strict, path /, for `SESSION_TTL_MS`. */
export function setSessionCookie(reply: FastifyReply, id: string): void {
  void reply.setCookie(SESSION_COOKIE, id, {
    httpOnly: true,
    sameSite: 'strict',
    // Secure when the request came over HTTPS (a proxy's X-Forwarded-Proto is not trusted).
    secure: 'auto',
    path: '/',
    maxAge: SESSION_TTL_MS / 1000,
  })
}

/** Clears the session cookie. */
export function clearSessionCookie(reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/' })
}

/** Failed sign-ins allowed per client address within `SIGN_IN_WINDOW_MS`; more answer 429. */
export const MAX_FAILED_SIGN_INS = 5
/** The window of `MAX_FAILED_SIGN_INS`, ms. */
export const SIGN_IN_WINDOW_MS = 60_000

/**
 * Counts failed sign-ins per client address, so the admin token cannot be guessed at speed: after
 * `MAX_FAILED_SIGN_INS` failures within `SIGN_IN_WINDOW_MS` the address is refused until the window
 * ends. In memory, like the sessions; at most 10,000 addresses are tracked (the oldest forgotten).
 */
export class SignInLimiter {
  private readonly failures = new Map<string, { count: number; until: number }>()

  constructor(private readonly clock: () => number = Date.now) {}

  /** Seconds `address` must wait before it may try again, or 0 when it may try now. */
  retryAfterS(address: string): number {
    const entry = this.failures.get(address)
    if (entry === undefined || entry.until <= this.clock()) return 0
    return entry.count >= MAX_FAILED_SIGN_INS ? Math.ceil((entry.until - this.clock()) / 1000) : 0
  }

  /** Records a failed sign-in of `address`. */
  failed(address: string): void {
    const now = this.clock()
    const entry = this.failures.get(address)
    if (entry !== undefined && entry.until > now) {
      entry.count += 1
      return
    }
    const oldest = this.failures.keys().next().value
    if (this.failures.size >= 10_000 && oldest !== undefined) this.failures.delete(oldest)
    this.failures.set(address, { count: 1, until: now + SIGN_IN_WINDOW_MS })
  }

  /** Forgets the failures of `address` (after a sign-in that succeeded). */
  succeeded(address: string): void {
    this.failures.delete(address)
  }
}
