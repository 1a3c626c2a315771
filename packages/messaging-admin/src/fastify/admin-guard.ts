import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { MessagingAdminError } from '../admin.js'

/** Options of `adminWriteGuard` and `messagingAdminPlugin`. */
export interface AdminAccessOptions {
  /**
   * The bearer token admin writes need (env `ADMIN_TOKEN`, at least 16 characters). Unset: every
   * admin write is refused with 403 (read-only).
   */
  token?: string | undefined
}

/** Header naming who acts; 1-64 of `[A-Za-z0-9 ._@-]`, default `admin`. */
export const ADMIN_ACTOR_HEADER = 'x-admin-actor'
const ACTOR = /^[A-Za-z0-9 ._@-]{1,64}$/

/** Shortest `token` accepted, in characters. */
export const MIN_ADMIN_TOKEN_LENGTH = 16

const digest = (value: string): Buffer => createHash('sha256').update(value).digest()

/** Whether `given` is `expected`, compared in constant time (both hashed to one length first). */
function sameToken(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected))
}

/**
 * Who acts, from the `x-admin-actor` header (`admin` when absent).
 * @throws MessagingAdminError 400 when the header is given more than once or is not 1-64 of `[A-Za-z0-9 ._@-]`
 */
export function adminActor(request: FastifyRequest): string {
  const value = request.headers[ADMIN_ACTOR_HEADER]
  if (value === undefined) return 'admin'
  if (typeof value === 'string' && ACTOR.test(value)) return value
  throw new MessagingAdminError(400, 'The x-admin-actor header is malformed', [
    { path: `headers.${ADMIN_ACTOR_HEADER}`, issue: 'must be 1-64 characters of A-Z a-z 0-9 space . _ @ -' },
  ])
}

/** Header naming the actor's role where the caller has roles (the console sends `operator`); optional. */
export const ADMIN_ROLE_HEADER = 'x-admin-role'
const ROLE = /^[a-z][a-z-]{0,31}$/

/**
 * The actor's role from the `x-admin-role` header, recorded with the action; undefined when absent.
 * @throws MessagingAdminError 400 when the header is given more than once or is not 1-32 of `[a-z-]`
 */
export function adminRole(request: FastifyRequest): string | undefined {
  const value = request.headers[ADMIN_ROLE_HEADER]
  if (value === undefined) return undefined
  if (typeof value === 'string' && ROLE.test(value)) return value
  throw new MessagingAdminError(400, 'The x-admin-role header is malformed', [
    {
      path: `headers.${ADMIN_ROLE_HEADER}`,
      issue: 'must be 1-32 characters of a-z and -, starting with a letter',
    },
  ])
}

/** Whether the request's body is declared JSON (`application/json`, any parameters). */
const isJson = (request: FastifyRequest): boolean =>
  (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json'

/**
 * A hook for admin writes (use it as `onRequest` to refuse before the body is read, or as
 * `preHandler`): 403 when no token is configured ("admin writes are disabled: set ADMIN_TOKEN"), 401
 * with `WWW-Authenticate: Bearer` unless `Authorization: Bearer <token>` matches (constant time), 415
 * unless the body is `application/json` (no HTML form can send that cross-site), 400 for a malformed
 * `x-admin-actor`. Errors carry `statusCode`; the app's error handler renders them. Never logs or
 * echoes the token.
 * @throws RangeError when `options.token` is set but shorter than 16 characters
 */
export function adminWriteGuard(
  options: AdminAccessOptions,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const { token } = options
  if (token !== undefined && token.length < MIN_ADMIN_TOKEN_LENGTH)
    throw new RangeError(`the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`)
  return async (request, reply) => {
    if (token === undefined) throw new MessagingAdminError(403, 'admin writes are disabled: set ADMIN_TOKEN')
    const header = request.headers.authorization ?? ''
    const match = /^Bearer ([^\s]+)$/i.exec(header)
    if (!match?.[1] || !sameToken(match[1], token)) {
      void reply.header('www-authenticate', 'Bearer')
      throw new MessagingAdminError(401, 'admin writes need Authorization: Bearer <ADMIN_TOKEN>', [
        { path: 'headers.authorization', issue: header === '' ? 'is missing' : 'is not the admin token' },
      ])
    }
    if (!isJson(request)) {
      throw new MessagingAdminError(415, 'admin writes take a body of type application/json', [
        { path: 'headers.content-type', issue: 'must be application/json' },
      ])
    }
    adminActor(request)
    adminRole(request)
  }
}
