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
  type SessionStore,
} from '../session.js'

/** Options of `sessionRoutes`. */
export interface SessionRoutesOptions {
  sessions: SessionStore
  /** ADMIN_TOKEN; undefined: the console is read-only and sign-in is refused. */
  token: string | undefined
}

const SignIn = z.strictObject({
  actor: z.string().regex(ACTOR, { error: 'must be 1-64 characters of letters, digits, space and ._@-' }),
  token: z.string().min(1).max(1_000),
})

/** The 403 of a console started without ADMIN_TOKEN. */
export const writesDisabled = () =>
  new HttpError(403, 'admin writes are disabled: set ADMIN_TOKEN', [
    { path: 'ADMIN_TOKEN', issue: 'is not set' },
  ])

/** The session id of the request's cookie, if any. */
export const sessionIdOf = (request: FastifyRequest): string | undefined => request.cookies[SESSION_COOKIE]

/**
 * GET /api/session: who is signed in. POST /api/session `{ actor, token }`: signs in when `token` is
 * ADMIN_TOKEN (compared in constant time), setting the HttpOnly, SameSite=Strict session cookie; 401
 * otherwise (429 after `MAX_FAILED_SIGN_INS` failures a minute from one address), 403 when the
 * console has no token. DELETE /api/session signs out. POST and DELETE need
 * a same-origin `Origin`; POST needs `application/json`. The token is never logged nor echoed.
 */
export const sessionRoutes: FastifyPluginCallbackZod<SessionRoutesOptions> = (
  app,
  { sessions, token },
  done,
) => {
  const limiter = new SignInLimiter()
  const view = (request: FastifyRequest): SessionView => {
    const session = sessions.get(sessionIdOf(request))
    return {
      signedIn: session !== undefined,
      actor: session?.actor ?? null,
      writesEnabled: token !== undefined,
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
        if (token === undefined) throw writesDisabled()
      }),
    },
    async (request, reply) => {
      const { actor } = request.body
      const wait = limiter.retryAfterS(request.ip)
      if (wait > 0) {
        void reply.header('retry-after', String(wait))
        throw new HttpError(429, `Too many failed sign-ins; try again in ${wait} s`)
      }
      if (token === undefined || !sameSecret(request.body.token, token)) {
        limiter.failed(request.ip)
        request.log.warn({ actor }, 'console sign-in refused: wrong token')
        void reply.header('www-authenticate', 'Bearer')
        throw new HttpError(401, 'The token is not the admin token', [
          { path: 'body.token', issue: 'is wrong' },
        ])
      }
      limiter.succeeded(request.ip)
      sessions.delete(sessionIdOf(request))
      setSessionCookie(reply, sessions.create(actor))
      request.log.info({ actor }, 'console sign-in')
      return { signedIn: true, actor, writesEnabled: true } satisfies SessionView
    },
  )

  app.delete('/api/session', { onRequest: guard(requireSameOrigin) }, async (request, reply) => {
    sessions.delete(sessionIdOf(request))
    clearSessionCookie(reply)
    return { signedIn: false, actor: null, writesEnabled: token !== undefined } satisfies SessionView
  })
  done()
}
