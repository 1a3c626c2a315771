/**
 * The response headers the services send, documented once as OpenAPI components (`#/components/headers`)
 * and referenced from every response that carries them, so a generated client knows them by name.
 */
import type { z } from 'zod'
import { REQUEST_ID_HEADER } from './request-id.js'

/** OpenAPI 3 header objects by component name, with the wire name each is sent under. */
export const RESPONSE_HEADERS = {
  RequestId: {
    name: REQUEST_ID_HEADER,
    description:
      'The id of this request in the logs: the incoming x-request-id when it is 1-128 characters of ' +
      '[A-Za-z0-9_.:-], else a new UUID. Sent with every response.',
    schema: { type: 'string' },
  },
  RetryAfter: {
    name: 'retry-after',
    description: 'Seconds to wait before retrying (RFC 9110, 10.2.3): the service is busy or overloaded.',
    schema: { type: 'integer', minimum: 0 },
  },
  Location: {
    name: 'location',
    description: 'The path of the resource the request created, e.g. /orders/{id}.',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    name: 'idempotent-replayed',
    description:
      '"true" when the answer is the stored first answer to a request with the same Idempotency-Key; ' +
      'absent on a first answer.',
    schema: { type: 'string', enum: ['true'] },
  },
} as const

/** A header a route may declare on a response (see `withHeaders`). */
export type ResponseHeader = keyof typeof RESPONSE_HEADERS

/**
 * `schema` documented as the response `description`, sent with the headers `names`, e.g.
 * `response: { 201: withHeaders(OrderView, 'The new order', 'Location', 'IdempotentReplayed') }`.
 * Serialisation is unchanged; the OpenAPI document's response gets the description and a `$ref` to
 * each header's component (one `.meta()`, so a schema with a component id stays a reference). Every
 * response carries `RequestId`, and every 503 `RetryAfter`, without being declared.
 */
export function withHeaders<S extends z.ZodType>(
  schema: S,
  description: string,
  ...names: ResponseHeader[]
): S {
  // @fastify/swagger reads a response schema's `headers` keyword into the response's headers;
  // `documentResponseHeaders` then replaces each by a reference to its component.
  const headers = Object.fromEntries(
    names.map((n) => {
      const { name, description, schema: type } = RESPONSE_HEADERS[n]
      return [name, { description, ...type }]
    }),
  )
  return schema.meta({ description, headers })
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null

const ref = (name: ResponseHeader) => ({ $ref: `#/components/headers/${name}` })

/** `record` with `fn` applied to each value that is an object; other values kept. */
export const mapObjects = (record: unknown, fn: (key: string, value: Json) => unknown): Json =>
  Object.fromEntries(
    Object.entries(isObject(record) ? record : {}).map(([key, value]) => [
      key,
      isObject(value) ? fn(key, value) : value,
    ]),
  )

/**
 * The document with `components.headers` (`RESPONSE_HEADERS`) and, on every response, the headers
 * it carries as references: those a route declared with `withHeaders`, `x-request-id` always, and
 * `retry-after` on a 503. Returns a new object; `document` is not changed.
 */
export function documentResponseHeaders<D extends object>(document: D): D {
  const doc = document as Json
  const components = isObject(doc.components) ? doc.components : {}
  const headers = Object.fromEntries(
    Object.entries(RESPONSE_HEADERS).map(([name, { description, schema }]) => [
      name,
      { description, schema },
    ]),
  )
  const paths = mapObjects(doc.paths, (_path, item) =>
    mapObjects(item, (_method, operation) =>
      isObject(operation.responses)
        ? {
            ...operation,
            responses: mapObjects(operation.responses, (status, response) => ({
              ...response,
              headers: responseHeaders(status, isObject(response.headers) ? response.headers : {}),
            })),
          }
        : operation,
    ),
  )
  return {
    ...document,
    components: {
      ...components,
      headers: { ...(isObject(components.headers) ? components.headers : {}), ...headers },
    },
    paths,
  }
}

/** Component name by wire name: `location` -> `Location`. */
const BY_WIRE_NAME = new Map<string, ResponseHeader>(
  Object.entries(RESPONSE_HEADERS).map(
    ([component, { name }]) => [name, component as ResponseHeader] as const,
  ),
)

function responseHeaders(status: string, declared: Json): Json {
  const out: Json = {}
  for (const [wire, header] of Object.entries(declared)) {
    const component = BY_WIRE_NAME.get(wire.toLowerCase())
    out[wire] = component ? ref(component) : header
  }
  out[RESPONSE_HEADERS.RequestId.name] = ref('RequestId')
  if (status === '503') out[RESPONSE_HEADERS.RetryAfter.name] = ref('RetryAfter')
  return out
}
