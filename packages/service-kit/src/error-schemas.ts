/**
 * The error bodies of errors.ts as zod schemas, for routes' `response` maps: they document the errors
 * in OpenAPI and serialise them (fastify runs every reply, error handler's included, through the
 * route's schema for that status, so these must match `clientError` and the 5xx body field for field).
 */
import { z } from 'zod'
import type { ClientErrorBody, ServerErrorBody } from './errors.js'

/** `{ error, message, details: [{ path, issue }] }`: every 4xx body (see `clientError`). */
export const ClientErrorResponse = z
  .object({
    error: z.string().describe('The HTTP reason phrase, e.g. Bad Request'),
    message: z.string(),
    details: z
      .array(
        z.object({
          path: z.string().describe('Where, e.g. body.items.0.quantity or headers.idempotency-key'),
          issue: z.string().describe('What is wrong there'),
        }),
      )
      .describe('Empty when nothing in the request is to blame, e.g. for a 404'),
  })
  // A named component of the OpenAPI document, referenced by every 4xx response.
  .meta({ id: 'ClientError' }) satisfies z.ZodType<ClientErrorBody>

/** `{ error, message, requestId }`: every 5xx body, without internals. */
export const ServerErrorResponse = z
  .object({
    error: z.string(),
    message: z.string(),
    requestId: z.string().describe('Quote it when reporting the error; the logs carry it'),
  })
  // A named component of the OpenAPI document, referenced by every 5xx response.
  .meta({ id: 'ServerError' }) satisfies z.ZodType<ServerErrorBody>

/** Status codes the error handler answers, with what each means for the OpenAPI document. */
const MEANINGS = {
  400: 'The request is invalid: details name each field and what is wrong with it',
  401: 'An admin write without Authorization: Bearer <ADMIN_TOKEN>, or with another token',
  403: 'Admin writes are disabled: the service has no ADMIN_TOKEN',
  404: 'Not found',
  409: 'Conflict with an earlier request',
  413: 'The request body is too large',
  414: 'A path parameter is longer than 100 characters',
  415: 'The request body is not application/json, or its charset is not UTF-8',
  500: 'Unexpected error; internals are hidden, the request id finds the logs',
  503: 'The service is busy (its database unavailable, or overloaded); retry after Retry-After seconds',
} as const

/** A status code `errorResponses` knows. */
export type ErrorStatus = keyof typeof MEANINGS

/**
 * The `response` entries of the errors a route answers, to spread beside its success schema:
 * `response: { 200: OrderView, ...errorResponses(400, 404, 503) }`. 4xx use `ClientErrorResponse`,
 * 5xx `ServerErrorResponse`, each described by its status's meaning.
 */
export function errorResponses<S extends ErrorStatus>(
  ...statuses: S[]
): Record<S, typeof ClientErrorResponse | typeof ServerErrorResponse> {
  const entries = statuses.map((status) => [
    status,
    (status >= 500 ? ServerErrorResponse : ClientErrorResponse).describe(MEANINGS[status]),
  ])
  return Object.fromEntries(entries) as Record<S, typeof ClientErrorResponse | typeof ServerErrorResponse>
}
