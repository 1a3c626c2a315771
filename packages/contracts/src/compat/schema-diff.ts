/**
 * The classifier of the compatibility gate: compares an event's released JSON Schema with its
 * schema in the working tree and says, for every difference, which side of a rolling upgrade it
 * breaks. It knows the subset of JSON Schema (draft 2020-12) that zod's `toJSONSchema` writes for
 * this package's events (docs/events/*.json) and refuses anything else with
 * `UnsupportedSchemaError`, so a construct it cannot judge is never passed as compatible.
 *
 * Every consumer validates a payload against the schema of its own build before its handler runs
 * (packages/messaging: an invalid payload is dead-lettered at once), so during an upgrade both
 * directions count:
 * - `readers`: a consumer still on the released schema reads what a producer on the new schema
 *   writes. Broken by anything the new schema accepts that the released one refused (a required
 *   field made optional or removed, an enum value added, a type or bound widened).
 * - `writers`: a consumer on the new schema reads what a producer still on the released schema
 *   wrote (and what is already queued). Broken by anything the released schema accepted that the new
 *   one refuses (a new required field, a type or bound narrowed, an enum value removed).
 */

/** A JSON Schema node as parsed from a file: a plain JSON object. */
export type JsonSchema = Readonly<Record<string, unknown>>

/** Which side of an upgrade a change breaks (see the module comment). */
export type Direction = 'readers' | 'writers'

/** What kind of difference was found at one path. */
export type ChangeKind =
  | 'field-added'
  | 'field-removed'
  | 'made-required'
  | 'made-optional'
  | 'type-changed'
  | 'type-narrowed'
  | 'type-widened'
  | 'enum-values-added'
  | 'enum-values-removed'
  | 'constraint-tightened'
  | 'constraint-loosened'
  | 'additional-properties-closed'
  | 'additional-properties-opened'

/** One difference between the released and the current schema of an event. */
export interface SchemaChange {
  /** Field path in the payload: `shippingAddress.country`, `lines[].sku`; `` for the payload itself. */
  path: string
  kind: ChangeKind
  /** The directions it breaks; empty for a compatible change (an optional field added). */
  breaks: Direction[]
  /** What changed, in the schema's terms, e.g. `maxLength 64 -> 32`, `added "GBP"`. */
  detail: string
}

/** A schema construct the classifier does not judge (a keyword, or a keyword's form). */
export class UnsupportedSchemaError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(
      `${path === '' ? '(payload)' : path}: ${reason}; the compatibility gate judges only the JSON Schema subset of docs/events (packages/contracts/src/compat/schema-diff.ts)`,
    )
    this.name = 'UnsupportedSchemaError'
  }
}

/** Keywords that say something about a value the classifier compares. */
const ASSERTIONS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'format',
  'pattern',
  'allOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
])
/** Keywords that validate nothing: differences in them are not changes of the contract. */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
])
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean', 'null'])

/**
 * The differences between an event's released schema and its current one, in path order (a parent
 * before its fields).
 * @throws UnsupportedSchemaError when either schema uses a keyword, or a form of one, outside the
 *   subset (anyOf, $ref, const, a type list, additionalProperties as a schema, ...)
 */
export function diffSchemas(released: JsonSchema, current: JsonSchema): SchemaChange[] {
  const changes: SchemaChange[] = []
  compareNode(released, current, '', changes)
  return changes
}

function compareNode(old: JsonSchema, now: JsonSchema, path: string, out: SchemaChange[]): void {
  const oldType = typeOf(old, path)
  const newType = typeOf(now, path)
  if (oldType !== newType) {
    const widened = oldType === 'integer' && newType === 'number'
    const narrowed = oldType === 'number' && newType === 'integer'
    const kind = widened ? 'type-widened' : narrowed ? 'type-narrowed' : 'type-changed'
    const breaks: Direction[] = widened ? ['readers'] : narrowed ? ['writers'] : ['readers', 'writers']
    out.push({ path, kind, breaks, detail: `type ${oldType} -> ${newType}` })
    if (!widened && !narrowed) return
  }
  compareEnum(old, now, path, out)
  compareFormat(old, now, path, out)
  comparePatterns(old, now, path, out)
  for (const [min, max] of [
    ['minLength', 'maxLength'],
    ['minItems', 'maxItems'],
  ] as const) {
    compareBound(inclusiveBound(old, min, path), inclusiveBound(now, min, path), 'lower', path, out)
    compareBound(inclusiveBound(old, max, path), inclusiveBound(now, max, path), 'upper', path, out)
  }
  compareBound(numericBound(old, 'lower', path), numericBound(now, 'lower', path), 'lower', path, out)
  compareBound(numericBound(old, 'upper', path), numericBound(now, 'upper', path), 'upper', path, out)
  if (newType === 'object') compareObject(old, now, path, out)
  if (newType === 'array') compareNode(itemsOf(old, path), itemsOf(now, path), `${path}[]`, out)
}

/** The node's single `type`, after refusing every keyword outside the subset. */
function typeOf(node: JsonSchema, path: string): string {
  for (const key of Object.keys(node)) {
    if (!ASSERTIONS.has(key) && !ANNOTATIONS.has(key))
      throw new UnsupportedSchemaError(path, `keyword '${key}'`)
  }
  const type = node.type
  if (typeof type !== 'string' || !TYPES.has(type)) {
    throw new UnsupportedSchemaError(path, `'type' must be one type name, found ${JSON.stringify(type)}`)
  }
  if (type !== 'object') {
    for (const key of ['properties', 'required', 'additionalProperties']) {
      if (key in node) throw new UnsupportedSchemaError(path, `'${key}' on a ${type}`)
    }
  }
  if (type !== 'array' && 'items' in node) throw new UnsupportedSchemaError(path, `'items' on a ${type}`)
  return type
}

function compareObject(old: JsonSchema, now: JsonSchema, path: string, out: SchemaChange[]): void {
  const oldProps = propertiesOf(old, path)
  const newProps = propertiesOf(now, path)
  const oldRequired = requiredOf(old, path)
  const newRequired = requiredOf(now, path)
  const oldClosed = closedOf(old, path)
  const newClosed = closedOf(now, path)
  if (oldClosed !== newClosed) {
    out.push(
      newClosed
        ? {
            path,
            kind: 'additional-properties-closed',
            breaks: ['writers'],
            detail: 'additionalProperties false',
          }
        : {
            path,
            kind: 'additional-properties-opened',
            breaks: ['readers'],
            detail: 'additionalProperties allowed',
          },
    )
  }
  const names = [...new Set([...oldProps.keys(), ...newProps.keys()])]
  for (const name of names) {
    const field = path === '' ? name : `${path}.${name}`
    const before = oldProps.get(name)
    const after = newProps.get(name)
    if (before === undefined) {
      const required = newRequired.has(name)
      const breaks: Direction[] = [
        ...(oldClosed ? ['readers' as const] : []),
        ...(required ? ['writers' as const] : []),
      ]
      out.push({
        path: field,
        kind: 'field-added',
        breaks,
        detail: required ? 'added, required' : 'added, optional',
      })
      continue
    }
    if (after === undefined) {
      const breaks: Direction[] = ['readers', ...(newClosed ? ['writers' as const] : [])]
      const was = oldRequired.has(name) ? 'required' : 'optional'
      out.push({ path: field, kind: 'field-removed', breaks, detail: `removed (was ${was})` })
      continue
    }
    if (oldRequired.has(name) && !newRequired.has(name)) {
      out.push({ path: field, kind: 'made-optional', breaks: ['readers'], detail: 'required -> optional' })
    }
    if (!oldRequired.has(name) && newRequired.has(name)) {
      out.push({ path: field, kind: 'made-required', breaks: ['writers'], detail: 'optional -> required' })
    }
    compareNode(before, after, field, out)
  }
}

function propertiesOf(node: JsonSchema, path: string): Map<string, JsonSchema> {
  const props = node.properties ?? {}
  if (!isObject(props)) throw new UnsupportedSchemaError(path, `'properties' must be an object`)
  const map = new Map<string, JsonSchema>()
  for (const [name, schema] of Object.entries(props)) {
    if (!isObject(schema)) throw new UnsupportedSchemaError(`${path}.${name}`, 'a boolean schema')
    map.set(name, schema)
  }
  return map
}

function requiredOf(node: JsonSchema, path: string): Set<string> {
  const required = node.required ?? []
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string')) {
    throw new UnsupportedSchemaError(path, `'required' must be a list of names`)
  }
  return new Set(required)
}

/** Whether the object refuses fields it does not declare: `false` closes it; absent, `true`, `{}` leave it open. */
function closedOf(node: JsonSchema, path: string): boolean {
  const extra = node.additionalProperties
  if (extra === undefined || extra === true) return false
  if (extra === false) return true
  if (isObject(extra) && Object.keys(extra).length === 0) return false
  throw new UnsupportedSchemaError(path, `'additionalProperties' as a schema`)
}

function itemsOf(node: JsonSchema, path: string): JsonSchema {
  const items = node.items
  if (!isObject(items)) throw new UnsupportedSchemaError(path, `an array without one 'items' schema`)
  return items
}

function compareEnum(old: JsonSchema, now: JsonSchema, path: string, out: SchemaChange[]): void {
  const before = enumOf(old, path)
  const after = enumOf(now, path)
  if (before === undefined && after === undefined) return
  if (before === undefined) {
    out.push({ path, kind: 'constraint-tightened', breaks: ['writers'], detail: 'enum added' })
    return
  }
  if (after === undefined) {
    out.push({ path, kind: 'constraint-loosened', breaks: ['readers'], detail: 'enum removed' })
    return
  }
  const added = [...after].filter((v) => !before.has(v))
  const removed = [...before].filter((v) => !after.has(v))
  if (added.length > 0) {
    out.push({ path, kind: 'enum-values-added', breaks: ['readers'], detail: `added ${added.join(', ')}` })
  }
  if (removed.length > 0) {
    out.push({
      path,
      kind: 'enum-values-removed',
      breaks: ['writers'],
      detail: `removed ${removed.join(', ')}`,
    })
  }
}

/** The enum's values as JSON texts, or undefined without an enum. */
function enumOf(node: JsonSchema, path: string): Set<string> | undefined {
  if (node.enum === undefined) return undefined
  if (!Array.isArray(node.enum)) throw new UnsupportedSchemaError(path, `'enum' must be a list`)
  return new Set(node.enum.map((v) => JSON.stringify(v)))
}

function compareFormat(old: JsonSchema, now: JsonSchema, path: string, out: SchemaChange[]): void {
  const before = formatOf(old, path)
  const after = formatOf(now, path)
  if (before === after) return
  const detail = `format ${before ?? 'none'} -> ${after ?? 'none'}`
  if (before === undefined) out.push({ path, kind: 'constraint-tightened', breaks: ['writers'], detail })
  else if (after === undefined) out.push({ path, kind: 'constraint-loosened', breaks: ['readers'], detail })
  else out.push({ path, kind: 'type-changed', breaks: ['readers', 'writers'], detail })
}

function formatOf(node: JsonSchema, path: string): string | undefined {
  if (node.format === undefined || typeof node.format === 'string') return node.format
  throw new UnsupportedSchemaError(path, `'format' must be a name`)
}

/**
 * Patterns a string must match: `pattern` plus the `pattern` of each `allOf` entry (zod writes a
 * second pattern on one string as `allOf: [{ pattern }, { pattern }]`). Any other use of `allOf` is
 * outside the subset.
 */
function patternsOf(node: JsonSchema, path: string): Set<string> {
  const patterns = new Set<string>()
  const add = (p: unknown) => {
    if (typeof p !== 'string') throw new UnsupportedSchemaError(path, `'pattern' must be a string`)
    patterns.add(p)
  }
  if (node.pattern !== undefined) add(node.pattern)
  if (node.allOf === undefined) return patterns
  if (!Array.isArray(node.allOf)) throw new UnsupportedSchemaError(path, `'allOf' must be a list`)
  for (const entry of node.allOf) {
    if (!isObject(entry) || Object.keys(entry).some((k) => k !== 'pattern' && !ANNOTATIONS.has(k))) {
      throw new UnsupportedSchemaError(path, `'allOf' with an entry other than { pattern }`)
    }
    add(entry.pattern)
  }
  return patterns
}

function comparePatterns(old: JsonSchema, now: JsonSchema, path: string, out: SchemaChange[]): void {
  const before = patternsOf(old, path)
  const after = patternsOf(now, path)
  for (const p of after) {
    if (!before.has(p))
      out.push({ path, kind: 'constraint-tightened', breaks: ['writers'], detail: `pattern ${p} added` })
  }
  for (const p of before) {
    if (!after.has(p))
      out.push({ path, kind: 'constraint-loosened', breaks: ['readers'], detail: `pattern ${p} removed` })
  }
}

/** A lower or upper bound: its keyword (for the message), value, and whether the bound itself is excluded. */
interface Bound {
  keyword: string
  value: number
  exclusive: boolean
}

function boundValue(node: JsonSchema, keyword: string, path: string): number | undefined {
  const value = node[keyword]
  if (value === undefined) return undefined
  if (typeof value !== 'number') throw new UnsupportedSchemaError(path, `'${keyword}' must be a number`)
  return value
}

function inclusiveBound(node: JsonSchema, keyword: string, path: string): Bound | undefined {
  const value = boundValue(node, keyword, path)
  return value === undefined ? undefined : { keyword, value, exclusive: false }
}

function numericBound(node: JsonSchema, side: 'lower' | 'upper', path: string): Bound | undefined {
  const [inclusive, exclusive] =
    side === 'lower' ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum']
  const inc = boundValue(node, inclusive, path)
  const exc = boundValue(node, exclusive, path)
  if (inc !== undefined && exc !== undefined) {
    throw new UnsupportedSchemaError(path, `both '${inclusive}' and '${exclusive}'`)
  }
  if (inc !== undefined) return { keyword: inclusive, value: inc, exclusive: false }
  if (exc !== undefined) return { keyword: exclusive, value: exc, exclusive: true }
  return undefined
}

const show = (b: Bound | undefined): string => (b === undefined ? 'none' : `${b.keyword} ${b.value}`)

/** A tighter lower bound refuses values the old one took (breaks writers); a looser one breaks readers. */
function compareBound(
  old: Bound | undefined,
  now: Bound | undefined,
  side: 'lower' | 'upper',
  path: string,
  out: SchemaChange[],
): void {
  if (old === undefined && now === undefined) return
  const sign = side === 'lower' ? 1 : -1
  let tighter: boolean
  if (old === undefined) tighter = true
  else if (now === undefined) tighter = false
  else if (old.value !== now.value) tighter = sign * (now.value - old.value) > 0
  else if (old.exclusive !== now.exclusive) tighter = now.exclusive
  else return
  const detail = `${show(old)} -> ${show(now)}`
  out.push(
    tighter
      ? { path, kind: 'constraint-tightened', breaks: ['writers'], detail }
      : { path, kind: 'constraint-loosened', breaks: ['readers'], detail },
  )
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
