import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { z } from 'zod'
import { HttpError } from './errors.js'

/** Wrappers whose inner schema decides whether a query parameter may be a list. */
const WRAPPERS = new Set(['optional', 'default', 'nullable', 'prefault', 'catch', 'readonly'])

/**
 * Whether `schema` (a route's `querystring`: a zod object, or a JSON Schema object) takes `key` as a
 * list: its field is a `z.array(...)` under any optional/default wrappers, or `type: 'array'`.
 * Anything else, or no schema, takes one value.
 */
function takesList(schema: unknown, key: string): boolean {
  // A JSON Schema querystring (the messaging admin routes'): its property's type.
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties
  if (properties && !('_zod' in (schema as object))) return properties[key]?.type === 'array'
  const shape = (schema as { shape?: Record<string, z.ZodType> } | undefined)?.shape
  let field = shape?.[key] as { _zod?: { def: { type: string; innerType?: unknown } } } | undefined
  while (field?._zod && WRAPPERS.has(field._zod.def.type)) field = field._zod.def.innerType as typeof field
  return field?._zod?.def.type === 'array'
}

/**
 * The 400 for a query parameter given more than once where the route takes one value
 * (`?limit=10&limit=20`), or undefined. fastify's parser makes the repeats an array, which a
 * number field would report as "expected number, received NaN"; this names the parameter instead.
 * Example: 400 "The query parameter limit is given 2 times; give it once", details
 * `[{ path: 'querystring.limit', issue: 'is repeated (2 values)' }]`.
 */
export function repeatedQueryParameter(request: FastifyRequest): HttpError | undefined {
  const query = request.query as Record<string, unknown> | undefined
  if (!query || typeof query !== 'object') return undefined
  const schema = request.routeOptions.schema?.querystring
  for (const [key, value] of Object.entries(query)) {
    if (!Array.isArray(value) || takesList(schema, key)) continue
    return new HttpError(400, `The query parameter ${key} is given ${value.length} times; give it once`, [
      { path: `querystring.${key}`, issue: `is repeated (${value.length} values)` },
    ])
  }
  return undefined
}

/** Refuses repeated query parameters (`repeatedQueryParameter`) before any route validates its query. */
export function refuseRepeatedQueryParameters(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    done(repeatedQueryParameter(request))
  })
}
