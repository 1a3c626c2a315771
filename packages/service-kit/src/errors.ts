import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'
import { isDatabaseUnavailable } from '@saga/messaging/parts'

/** One thing wrong with a request: where (`body.lines.0.sku`) and what. */
export interface ErrorDetail {
  path: string
  issue: string
}

/** The body of every 4xx response. */
export interface ClientErrorBody {
  /** The HTTP reason phrase, e.g. `Bad Request`. */
  error: string
  message: string
  details: ErrorDetail[]
}

/** The body of every 5xx response: no internals, only the request id to find the logs by. */
export interface ServerErrorBody {
  error: string
  message: string
  requestId: string
}

/**
 * An error a route throws on purpose; the error handler answers `statusCode` with the 4xx body.
 * Example: `throw new HttpError(404, 'order 7f… not found')`.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message)
    this.name = 'HttpError'
  }
}

const reason = (statusCode: number): string => STATUS_CODES[statusCode] ?? 'Error'

/**
 * The 415 for a body whose media type the services do not read: they read application/json only.
 * Example: `unsupportedMediaType('text/plain')` -> 415 "The body's media type 'text/plain' is not
 * supported; send application/json".
 * @param contentType the request's Content-Type header; undefined when a body came without one
 */
export function unsupportedMediaType(contentType: string | undefined): HttpError {
  const type = (contentType?.split(';')[0] ?? '').trim()
  return new HttpError(
    415,
    type === ''
      ? 'The body has no media type; send it as application/json'
      : `The body's media type '${type}' is not supported; send application/json`,
    [{ path: 'headers.content-type', issue: 'must be application/json' }],
  )
}

/** Seconds a client is told to wait (`Retry-After`) when the database is overloaded. */
export const BUSY_RETRY_AFTER_S = 2

/**
 * Whether `error` means the database is unavailable or overloaded, so the request is answered 503
 * with `Retry-After`; the rules are @saga/messaging's (`isDatabaseUnavailable`).
 */
export const isDatabaseBusy = isDatabaseUnavailable

/** Builds the 4xx body. */
export const clientError = (
  statusCode: number,
  message: string,
  details: ErrorDetail[] = [],
): ClientErrorBody => ({
  error: reason(statusCode),
  message,
  details,
})

function validationDetails(error: FastifyError): ErrorDetail[] {
  const context = error.validationContext ?? 'request'
  return (error.validation ?? []).flatMap((v) => {
    const path = [context, ...v.instancePath.split('/').filter(Boolean)]
    // zod reports unknown fields once, on their parent, with the names in `keys`: name each field.
    const keys = (v.params as { keys?: unknown } | undefined)?.keys
    if (v.keyword === 'unrecognized_keys' && Array.isArray(keys) && keys.length > 0) {
      return keys.map((key) => ({ path: [...path, String(key)].join('.'), issue: 'is not an allowed field' }))
    }
    return [{ path: path.join('.'), issue: v.message ?? 'is invalid' }]
  })
}

/** The `details` an error carries, when they are `{ path, issue }` strings; else none. */
function detailsOf(error: unknown): ErrorDetail[] {
  const details = (error as { details?: unknown }).details
  if (!Array.isArray(details)) return []
  return details.filter(
    (d): d is ErrorDetail =>
      typeof (d as ErrorDetail | undefined)?.path === 'string' &&
      typeof (d as ErrorDetail | undefined)?.issue === 'string',
  )
}

function handleError(
  this: FastifyInstance,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (error instanceof HttpError && error.statusCode < 500) {
    return reply.code(error.statusCode).send(clientError(error.statusCode, error.message, error.details))
  }
  if (hasZodFastifySchemaValidationErrors(error) || error.validation) {
    return reply.code(400).send(clientError(400, 'The request is invalid', validationDetails(error)))
  }
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    // fastify's own 415 (a type no parser reads) says only "Unsupported Media Type": name the one we read.
    const refused = unsupportedMediaType(request.headers['content-type'])
    return reply.code(415).send(clientError(415, refused.message, refused.details))
  }
  const statusCode = error.statusCode ?? 500
  if (statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors (413 body too large, 415 media type, 400 malformed JSON, ...) and
    // errors of packages that carry `statusCode` and maybe `details` (the messaging admin's).
    request.log.info({ err: error }, 'client error')
    return reply.code(statusCode).send(clientError(statusCode, error.message, detailsOf(error)))
  }
  if (statusCode === 503) {
    // A dependency that says it is unavailable on purpose (the messaging admin's broker): its message names it.
    request.log.warn({ err: error }, 'unavailable; answered 503')
    const body: ServerErrorBody = { error: reason(503), message: error.message, requestId: request.id }
    return reply.code(503).header('retry-after', String(BUSY_RETRY_AFTER_S)).send(body)
  }
  if (isDatabaseBusy(error)) {
    request.log.warn({ err: error }, 'database busy; answered 503')
    const body: ServerErrorBody = {
      error: reason(503),
      message: `The service is busy; retry in ${BUSY_RETRY_AFTER_S} s (quote the request id if it persists)`,
      requestId: request.id,
    }
    return reply.code(503).header('retry-after', String(BUSY_RETRY_AFTER_S)).send(body)
  }
  request.log.error({ err: error }, 'request failed')
  const body: ServerErrorBody = {
    error: reason(500),
    message: 'An unexpected error occurred; quote the request id when reporting it',
    requestId: request.id,
  }
  return reply.code(500).send(body)
}

/**
 * One error handler for the app: 4xx as `{ error, message, details: [{ path, issue }] }` (zod
 * validation errors from fastify-type-provider-zod included, 413 for oversized bodies), 5xx hiding
 * internals and carrying `requestId` (503 with `Retry-After` when the database is busy, see
 * `isDatabaseBusy`). A request the router does not match is a 405 in the same shape, with `Allow`
 * listing the path's methods (RFC 9110 section 15.5.6), when some route serves its path with another
 * method (`DELETE /orders/:id`), else a 404. Routes registered after this plugin, in any child
 * context, are covered.
 */
export const errorHandlerPlugin = fp(
  (app: FastifyInstance) => {
    // Every method some route answers (HEAD included: fastify adds it beside each GET).
    const methods = new Set<string>()
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) methods.add(method.toUpperCase())
    })
    app.setErrorHandler(handleError)
    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '/'
      const allowed = [...methods].filter((method) => app.findRoute({ method, url: path }) !== null).sort()
      if (allowed.length > 0) {
        const issue = `allows ${allowed.join(', ')}`
        return reply
          .code(405)
          .header('allow', allowed.join(', '))
          .send(
            clientError(405, `Method ${request.method} is not allowed on ${path}`, [
              { path: 'method', issue },
            ]),
          )
      }
      return reply.code(404).send(clientError(404, `Route ${request.method} ${path} not found`))
    })
  },
  { name: 'error-handler', fastify: '5.x' },
)
