import { isUtf8 } from 'node:buffer'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { HttpError, unsupportedMediaType } from './errors.js'

// `charset=...` in a Content-Type header, quoted or not (RFC 9110 section 8.3).
const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i

/**
 * Well-formed UTF-8 sequences by lead byte (RFC 3629 section 4): the lead byte's range, the
 * sequence's length in bytes and the range of its second byte. A lead byte in no row is invalid.
 */
const SEQUENCES: readonly { lead: [number, number]; length: number; second: [number, number] }[] = [
  { lead: [0x00, 0x7f], length: 1, second: [0, 0] },
  { lead: [0xc2, 0xdf], length: 2, second: [0x80, 0xbf] },
  { lead: [0xe0, 0xe0], length: 3, second: [0xa0, 0xbf] },
  { lead: [0xe1, 0xec], length: 3, second: [0x80, 0xbf] },
  { lead: [0xed, 0xed], length: 3, second: [0x80, 0x9f] },
  { lead: [0xee, 0xef], length: 3, second: [0x80, 0xbf] },
  { lead: [0xf0, 0xf0], length: 4, second: [0x90, 0xbf] },
  { lead: [0xf1, 0xf3], length: 4, second: [0x80, 0xbf] },
  { lead: [0xf4, 0xf4], length: 4, second: [0x80, 0x8f] },
]

/**
 * The offset of the first byte of `bytes` that is not part of a well-formed UTF-8 sequence
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF), or -1 when all are.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i] ?? 0
    const sequence = SEQUENCES.find(({ lead: [first, last] }) => b >= first && b <= last)
    if (!sequence) return i
    // The second byte has the lead byte's own range; the others are plain continuation bytes.
    for (let k = 1; k < sequence.length; k++) {
      const c = bytes[i + k]
      const [lo, hi] = k === 1 ? sequence.second : [0x80, 0xbf]
      if (c === undefined || c < lo || c > hi) return i
    }
    i += sequence.length
  }
  return -1
}

/** What `parseJsonBody` refuses, as the one error shape's 4xx (thrown as HttpError). */
function refuse(statusCode: number, message: string, path: string, issue: string): HttpError {
  return new HttpError(statusCode, message, [{ path, issue }])
}

/** The 400 for a route that needs a body and got none (an empty body, or no body and no content type). */
const emptyBody = (): HttpError => refuse(400, 'The body is empty; send a JSON document', 'body', 'is empty')

/** The media type of a Content-Type header, lower-cased, without its parameters: `application/json`. */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase()
}

/**
 * What a route that reads a JSON body (has a body schema) refuses before validation, so the schema
 * never judges what the parser did not read as JSON: a content type other than application/json is a
 * 415 naming the supported type (fastify's text/plain parser would hand the schema a string), and
 * no body at all without a content type is the same 400 as an empty JSON body (fastify hands the
 * schema `null`). Undefined when the request may go on. A route without a body schema is not
 * judged here: it takes no body, sent with any or no content type.
 * @param contentType the request's Content-Type header, if any
 * @param body the body as the content-type parser left it (`null` or `undefined` when none was sent)
 */
export function refuseBody(
  bodyRequired: boolean,
  contentType: string | undefined,
  body: unknown,
): HttpError | undefined {
  if (!bodyRequired) return undefined
  if (contentType !== undefined && mediaTypeOf(contentType) !== 'application/json')
    return unsupportedMediaType(contentType)
  if (contentType === undefined && (body === undefined || body === null)) return emptyBody()
  return undefined
}

/** Options of `parseJsonBody`. */
export interface ParseJsonBodyOptions {
  /**
   * Whether the route reads a body (has a body schema). Default true: an empty body is a 400. False:
   * an empty (or all-whitespace) body is no body, `undefined`, as for a request without one, so a
   * client that always sends `content-type: application/json` can call a route that takes no body
   * (`POST /orders/:id/cancel`). A body that is not empty is checked as usual either way.
   */
  bodyRequired?: boolean | undefined
}

/**
 * Parses a JSON request body, refusing what the framework would otherwise let through or explain
 * poorly: a declared charset other than UTF-8 (415; RFC 8259 section 8.1: JSON between systems is
 * UTF-8), bytes that are not UTF-8 (400, instead of storing them as U+FFFD), malformed JSON (400
 * with the parser's reason), and `__proto__` or `constructor.prototype` keys (400 naming the key:
 * they could pollute prototypes, so they are refused, not dropped).
 * @returns the parsed value; `undefined` for an empty body when `bodyRequired` is false
 * @throws HttpError 415 or 400 as above; an empty body is 400 too unless `bodyRequired` is false
 */
export function parseJsonBody(
  contentType: string | undefined,
  body: Buffer,
  { bodyRequired = true }: ParseJsonBodyOptions = {},
): unknown {
  const match = CHARSET.exec(contentType ?? '')
  const charset = (match?.[1] ?? match?.[2] ?? 'utf-8').toLowerCase()
  if (charset !== 'utf-8' && charset !== 'utf8') {
    throw refuse(
      415,
      `The body's charset '${charset}' is not supported; send UTF-8`,
      'headers.content-type',
      'charset must be utf-8',
    )
  }
  if (!isUtf8(body)) {
    const at = firstInvalidUtf8(body)
    const byte = (body[at] ?? 0).toString(16).padStart(2, '0')
    throw refuse(
      400,
      'The body is not valid UTF-8',
      'body',
      `byte 0x${byte} at offset ${at} is not valid UTF-8`,
    )
  }
  const text = body.toString('utf8')
  if (text.trim() === '' && !bodyRequired) return undefined
  if (text.trim() === '') throw emptyBody()
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw refuse(400, 'Body is not valid JSON', 'body', (error as Error).message)
  }
  const forbidden = forbiddenKey(value, 'body')
  if (forbidden !== undefined) {
    const key = forbidden.endsWith('__proto__') ? '__proto__' : 'constructor.prototype'
    throw refuse(
      400,
      `The body holds a '${key}' key, which is refused (it could pollute prototypes)`,
      forbidden,
      'is not an allowed key',
    )
  }
  return value
}

/**
 * The path of the first `__proto__` key, or `constructor` key holding a `prototype`, in a parsed
 * JSON value (JSON.parse keeps them as own properties; merging such an object into another could
 * replace that object's prototype). Undefined when there is none.
 */
function forbiddenKey(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (Object.hasOwn(value, '__proto__')) return `${path}.__proto__`
  const ctor: unknown = Object.hasOwn(value, 'constructor')
    ? (value as { constructor: unknown }).constructor
    : undefined
  if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype'))
    return `${path}.constructor.prototype`
  for (const [key, inner] of Object.entries(value)) {
    const found = forbiddenKey(inner, `${path}.${key}`)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * Replaces fastify's JSON body parser with `parseJsonBody` (same body limit, read as bytes so the
 * UTF-8 check sees what was sent). A route without a body schema takes no body, so an empty body
 * sent to it with a JSON content type is accepted as none; a route with one still answers 400, and
 * refuses a non-JSON content type (415) or a request with no body and no content type (400) before
 * its schema runs (`refuseBody`, in a preValidation hook of the root, so every route has it).
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer' },
    (request: FastifyRequest, body: Buffer, done: (err: Error | null, value?: unknown) => void) => {
      try {
        const bodyRequired = request.routeOptions.schema?.body !== undefined
        done(null, parseJsonBody(request.headers['content-type'], body, { bodyRequired }))
      } catch (error) {
        done(error as Error)
      }
    },
  )
  app.addHook('preValidation', (request, _reply, done) => {
    const bodyRequired = request.routeOptions.schema?.body !== undefined
    done(refuseBody(bodyRequired, request.headers['content-type'], request.body))
  })
}
