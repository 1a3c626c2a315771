import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { HttpError } from '@saga/service-kit'
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'

/** The session cookie's name. */
export const SESSION_COOKIE = 'saga_console_session'
/** How long a session lasts after sign-in, ms (8 hours: a working day). */
export const SESSION_TTL_MS = 8 * 60 * 60 * 1000
/** Most sessions kept at once; signing in past it ends the oldest. */
const MAX_SESSIONS = 1_000

/** Who signed in: the actor named at sign-in, sent to the services as `x-admin-actor`. */
export interface Session {
  actor: string
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

  /** Starts a session for `actor`. @returns its id, for the cookie */
  create(actor: string): string {
    const id = randomBytes(32).toString('base64url')
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value
      if (oldest !== undefined) this.sessions.delete(oldest)
    }
    this.sessions.set(id, { actor, expiresAt: this.clock() + SESSION_TTL_MS })
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

/** The request's own origin, from its Host header: `http://127.0.0.1:3005`. */
const ownOrigin = (request: FastifyRequest): string => `${request.protocol}://${request.host}`

/**
 * Refuses a write that a page of another site could have sent: without an `Origin` header equal to
 * the console's own origin it is a 403 (browsers send Origin on every POST and DELETE).
 * @throws HttpError 403
 */
export function requireSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin
  if (origin === undefined || origin !== ownOrigin(request)) {
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
    path: '/',
    maxAge: SESSION_TTL_MS / 1000,
  })
}

/** Clears the session cookie. */
export function clearSessionCookie(reply: FastifyReply): void {
  void reply.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/' })
}
