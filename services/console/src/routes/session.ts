import { HttpError } from '@saga/service-kit'
import type { FastifyRequest } from 'fastify'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { SessionView } from '../api-types.js'
import {
  ACTOR,
  clearSessionCookie,
  guard,
  requireJson,
  requireSameOrigin,
  sameSecret,
  SESSION_COOKIE,
  setSessionCookie,
  SignInLimiter,
  type Role,
  type SessionStore,
} from '../session.js'

/** Options of `sessionRoutes`. */
export interface SessionRoutesOptions {
  sessions: SessionStore
  /** ADMIN_TOKEN: signs in an operator; undefined: nobody acts. */
  token: string | undefined
  /** CONSOLE_VIEWER_TOKEN: signs in a viewer; undefined: no viewer sign-in. Neither: sign-in is refused. */
  viewerToken?: string | undefined
}

const SignIn = z.strictObject({
  actor: z.string().regex(ACTOR, { error: 'must be 1-64 characters of letters, digits, space and ._@-' }),
  token: z.string().min(1).max(1_000),
})

/** The role `given` signs in as: operator for ADMIN_TOKEN, viewer for CONSOLE_VIEWER_TOKEN, else none. */
function roleOf(given: string, token: string | undefined, viewerToken: string | undefined): Role | undefined {
  // Both compared, in constant time each, so the answer's time does not say which token was near.
  const operator = token !== undefined && sameSecret(given, token)
  const viewer = viewerToken !== undefined && sameSecret(given, viewerToken)
  return operator ? 'operator' : viewer ? 'viewer' : undefined
}

/** The 403 of a write by a viewer: only operators act. */
export const viewersDoNotAct = () =>
  new HttpError(403, 'Viewers may not act: sign in with the operator token', [
    { path: 'session.role', issue: 'is viewer; only an operator acts' },
  ])

/** The 403 of a console started without ADMIN_TOKEN. */
export const writesDisabled = () =>
  new HttpError(403, 'admin writes are disabled: set ADMIN_TOKEN', [
    { path: 'ADMIN_TOKEN', issue: 'is not set' },
  ])

/** The session id of the request's cookie, if any. */
export const sessionIdOf = (request: FastifyRequest): string | undefined => request.cookies[SESSION_COOKIE]

/**
 * The `onRequest` guard of a console write (an action): refused before the body is read with 403
 * for another origin, 403 when the console has no ADMIN_TOKEN, 401 without a live session, 403 for
 * a viewer's session, 415 for a body that is not JSON.
 */
export function operatorWrite(sessions: SessionStore, token: string | undefined) {
  return guard((request) => {
    requireSameOrigin(request)
    if (token === undefined) throw writesDisabled()
    const session = sessions.get(sessionIdOf(request))
    if (session === undefined)
      throw new HttpError(401, 'Sign in to act', [{ path: 'cookies.session', issue: 'no live session' }])
    if (session.role !== 'operator') throw viewersDoNotAct()
    requireJson(request)
  })
}

/**
 * Who acts in a write the guard let through: the session's actor and role.
 * @throws HttpError 401 when the session ended in between
 */
export function operatorOf(sessions: SessionStore, request: FastifyRequest): { actor: string; role: Role } {
  const session = sessions.get(sessionIdOf(request))
  if (session === undefined) throw new HttpError(401, 'Sign in to act')
  return { actor: session.actor, role: session.role }
}

/**
 * GET /api/session: who is signed in, as which role. POST /api/session `{ actor, token }`: signs in
 * as an operator when `token` is ADMIN_TOKEN, as a viewer when it is CONSOLE_VIEWER_TOKEN (compared
 * in constant time), setting the HttpOnly, SameSite=Strict session cookie; 401 otherwise (429 after
 * `MAX_FAILED_SIGN_INS` failures a minute from one address), 403 when the console has neither token. DELETE /api/session signs out. POST and DELETE need
 * a same-origin `Origin`; POST needs `application/json`. The token is never logged nor echoed.
 */
export const sessionRoutes: FastifyPluginCallbackZod<SessionRoutesOptions> = (
  app,
  { sessions, token, viewerToken },
  done,
) => {
  const signInEnabled = token !== undefined || viewerToken !== undefined
  const limiter = new SignInLimiter()
  const view = (request: FastifyRequest, signedOut = false): SessionView => {
    const session = signedOut ? undefined : sessions.get(sessionIdOf(request))
    return {
      signedIn: session !== undefined,
      actor: session?.actor ?? null,
      role: session?.role ?? null,
      writesEnabled: token !== undefined,
      signInEnabled,
    }
  }

  app.get('/api/session', { schema: { hide: true } }, (request, reply) => reply.send(view(request)))

  app.post(
    '/api/session',
    {
      schema: { hide: true, body: SignIn },
      onRequest: guard((request) => {
        requireSameOrigin(request)
        requireJson(request)
        if (!signInEnabled) throw writesDisabled()
      }),
    },
    async (request, reply) => {
      const { actor } = request.body
      const wait = limiter.retryAfterS(request.ip)
      if (wait > 0) {
        void reply.header('retry-after', String(wait))
        throw new HttpError(429, `Too many failed sign-ins; try again in ${wait} s`)
      }
      const role = roleOf(request.body.token, token, viewerToken)
      if (role === undefined) {
        limiter.failed(request.ip)
        request.log.warn({ actor }, 'console sign-in refused: wrong token')
        void reply.header('www-authenticate', 'Bearer')
        throw new HttpError(401, 'The token is neither the operator nor the viewer token', [
          { path: 'body.token', issue: 'is wrong' },
        ])
      }
      limiter.succeeded(request.ip)
      sessions.delete(sessionIdOf(request))
      setSessionCookie(reply, sessions.create(actor, role))
      request.log.info({ actor, role }, 'console sign-in')
      return {
        signedIn: true,
        actor,
        role,
        writesEnabled: token !== undefined,
        signInEnabled,
      } satisfies SessionView
    },
  )

  app.delete('/api/session', { onRequest: guard(requireSameOrigin) }, async (request, reply) => {
    sessions.delete(sessionIdOf(request))
    clearSessionCookie(reply)
    return view(request, true)
  })
  done()
}
