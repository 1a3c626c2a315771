/**
 * What strict OpenAPI 3.0 tools need of a generated document and the generator does not give:
 * @fastify/swagger and zod's JSON Schema leave nullable enums without `null`, nullable references
 * without a `type`, open operations without `security`, no `servers`, no `license`, and the
 * components no operation uses.
 */

import { mapObjects } from './openapi-headers.js'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The license the services' documents name (the repository's). */
const LICENSE = { name: 'MIT', url: 'https://opensource.org/licenses/MIT' }

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** `value` with `fn` applied to every object in it, innermost first (a new tree; `value` unchanged). */
function mapTree(value: unknown, fn: (node: Json) => Json): unknown {
  if (Array.isArray(value)) return value.map((item) => mapTree(item, fn))
  if (!isObject(value)) return value
  return fn(Object.fromEntries(Object.entries(value).map(([key, child]) => [key, mapTree(child, fn)])))
}

/** `node` (nullable) with `null` among its `enum` values, if it has an enum. */
function withNullValue(node: Json): Json {
  const values = node.enum as unknown[] | undefined
  return Array.isArray(values) && !values.includes(null) ? { ...node, enum: [...values, null] } : node
}

/**
 * A nullable schema as OpenAPI 3.0.3 has validators read it: an `enum` lists `null` among its values
 * (3.0.3, "nullable": an enum without null refuses null whatever `nullable` says); a nullable
 * `allOf` of one reference (`nullable` without a sibling `type`, which strict loaders refuse) is
 * written out in place, the referenced schema with `nullable`, since a null can never match the
 * referenced schema that `allOf` requires it to.
 */
function strictNullable(node: Json, schemas: Json): Json {
  if (node.nullable !== true) return node
  const allOf = node.allOf as unknown[] | undefined
  if (node.type !== undefined || !Array.isArray(allOf) || allOf.length !== 1) return withNullValue(node)
  const target = referenced(allOf[0], schemas)
  if (typeof target?.type !== 'string') return node
  const { allOf: _reference, ...rest } = node
  return withNullValue({ ...target, ...rest })
}

/** The component schema `#/components/schemas/<name>` that `node` references, if any. */
function referenced(node: unknown, schemas: Json): Json | undefined {
  const ref = isObject(node) ? node.$ref : undefined
  if (typeof ref !== 'string' || !ref.startsWith('#/components/schemas/')) return undefined
  const target = schemas[ref.slice('#/components/schemas/'.length)]
  return isObject(target) ? target : undefined
}

/** Every operation says its security: the open ones `security: []` (no scheme needed). */
function explicitSecurity(paths: unknown): Json {
  return mapObjects(paths, (_path, item) =>
    mapObjects(item, (method, operation) =>
      METHODS.has(method) && operation.security === undefined ? { ...operation, security: [] } : operation,
    ),
  )
}

/** The component kinds pruned of unused members; any other kind is kept whole. */
const PRUNED = new Set(['schemas', 'headers', 'responses', 'parameters'])
const COMPONENT_REF = /^#\/components\/([A-Za-z]+)\/(.+)$/

/**
 * The components reachable by `$ref` from `roots`, through one another, as `<kind>/<name>` (e.g.
 * `schemas/Order`, `headers/RequestId`).
 */
function reachableComponents(roots: unknown, components: Json): Set<string> {
  const seen = new Set<string>()
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit)
    else if (isObject(value)) {
      const match = typeof value.$ref === 'string' ? COMPONENT_REF.exec(value.$ref) : null
      if (match) {
        const [, kind, name] = match as unknown as [string, string, string]
        if (!seen.has(`${kind}/${name}`)) {
          seen.add(`${kind}/${name}`)
          const group = components[kind]
          visit(isObject(group) ? group[name] : undefined)
        }
      }
      Object.values(value).forEach(visit)
    }
  }
  visit(roots)
  return seen
}

/** `components` with only the reachable members of the `PRUNED` kinds; the other kinds kept whole. */
function usedComponents(components: Json, used: Set<string>): Json {
  return Object.fromEntries(
    Object.entries(components).map(([kind, group]) => [
      kind,
      !PRUNED.has(kind) || !isObject(group)
        ? group
        : Object.fromEntries(Object.entries(group).filter(([name]) => used.has(`${kind}/${name}`))),
    ]),
  )
}

/**
 * `document` (an OpenAPI 3.0 document as @fastify/swagger makes it) made strict: nullable schemas
 * as 3.0.3 has them read (`strictNullable`), `security: []` on every open operation, `servers`
 * (`/`: each service serves its API at its root), `info.license`, and no component (schema,
 * header, response, parameter) that no operation reaches (zod registers an input and an output form
 * of each schema; only the used ones stay).
 * Returns a new object; `document` is not changed. Checked by the services' API suites with
 * Redocly's recommended rules and a strict loader (openapi-backend).
 */
export function strictOpenApi<T extends object>(document: T): T {
  const doc = document as Json
  const components = isObject(doc.components) ? doc.components : {}
  const schemas = isObject(components.schemas) ? components.schemas : {}
  const repaired = mapTree({ paths: doc.paths, schemas }, (node) => strictNullable(node, schemas)) as {
    paths: unknown
    schemas: Json
  }
  const paths = explicitSecurity(repaired.paths)
  const repairedComponents = { ...components, schemas: repaired.schemas }
  const used = reachableComponents(paths, repairedComponents)
  const info = isObject(doc.info) ? doc.info : {}
  return {
    ...doc,
    info: { ...info, license: info.license ?? LICENSE },
    servers: Array.isArray(doc.servers) && doc.servers.length > 0 ? doc.servers : [{ url: '/' }],
    paths,
    components: usedComponents(repairedComponents, used),
  } as T
}
