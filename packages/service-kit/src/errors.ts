import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod'

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
  return (error.validation ?? []).map((v) => ({
    path: [context, ...v.instancePath.split('/').filter(Boolean)].join('.'),
    issue: v.message ?? 'is invalid',
  }))
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
  const statusCode = error.statusCode ?? 500
  if (statusCode >= 400 && statusCode < 500) {
    // Fastify's own client errors: 413 body too large, 415 media type, 400 malformed JSON, ...
    request.log.info({ err: error }, 'client error')
    return reply.code(statusCode).send(clientError(statusCode, error.message))
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
 * internals and carrying `requestId`; unknown routes get a 404 in the same shape.
 */
export const errorHandlerPlugin = fp(
  (app: FastifyInstance) => {
    app.setErrorHandler(handleError)
    app.setNotFoundHandler((request, reply) =>
      reply
        .code(404)
        .send(clientError(404, `Route ${request.method} ${request.url.split('?')[0]} not found`)),
    )
  },
  { name: 'error-handler', fastify: '5.x' },
)
