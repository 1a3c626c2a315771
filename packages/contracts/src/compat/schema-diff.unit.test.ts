import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { diffSchemas, UnsupportedSchemaError, type JsonSchema } from './schema-diff.js'

/** A released event in the subset zod writes: ids, an enum, a pattern pair, bounds, a list of objects. */
const released = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:saga:event:thing.happened.v1',
  $comment: 'published with routing key thing.happened',
  title: 'ThingHappened',
  type: 'object',
  properties: {
    orderId: { type: 'string', format: 'uuid' },
    note: { type: 'string', maxLength: 200 },
    status: { type: 'string', enum: ['open', 'closed'] },
    name: { type: 'string', minLength: 1, allOf: [{ pattern: '^[^\\u0000]*$' }, { pattern: '\\S' }] },
    amount: { type: 'integer', minimum: 0, maximum: 1000 },
    lines: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        properties: { sku: { type: 'string', maxLength: 64 }, quantity: { type: 'integer', minimum: 1 } },
        required: ['sku', 'quantity'],
      },
    },
  },
  required: ['orderId', 'status', 'name', 'amount', 'lines'],
} as const

/** A schema node as the table edits it: the keywords it edits typed, every other one unknown. */
interface Mutable {
  [keyword: string]: unknown
  properties: Record<
    'orderId' | 'note' | 'status' | 'name' | 'amount' | 'lines' | 'sku' | 'quantity',
    Mutable
  > &
    Record<string, Mutable>
  required: string[]
  enum: string[]
  allOf: Array<Record<string, unknown>>
  items: Mutable
}
/** A new node for a table row (only the keywords it names). */
const node = (keywords: Record<string, unknown>) => keywords as Mutable
/** The released schema changed by `edit` (on a deep copy). */
const changed = (edit: (s: Mutable) => void): JsonSchema => {
  const copy = structuredClone(released) as unknown as Mutable
  edit(copy)
  return copy
}
const verdicts = (edit: (s: Mutable) => void) =>
  diffSchemas(released, changed(edit)).map(({ path, kind, breaks }) => ({ path, kind, breaks }))

/** Each row: a change, and the verdicts (path, kind, directions broken) it must get. */
const TABLE: Array<[string, (s: Mutable) => void, Array<{ path: string; kind: string; breaks: string[] }>]> =
  [
    [
      'an optional field added',
      (s) => (s.properties.channel = node({ type: 'string' })),
      [{ path: 'channel', kind: 'field-added', breaks: [] }],
    ],
    [
      'a required field added',
      (s) => {
        s.properties.channel = node({ type: 'string' })
        s.required.push('channel')
      },
      [{ path: 'channel', kind: 'field-added', breaks: ['writers'] }],
    ],
    [
      'an optional field added to a closed object',
      (s) => {
        s.additionalProperties = false
        s.properties.channel = node({ type: 'string' })
      },
      [
        { path: '', kind: 'additional-properties-closed', breaks: ['writers'] },
        { path: 'channel', kind: 'field-added', breaks: [] },
      ],
    ],
    [
      'a required field removed',
      (s) => {
        delete (s.properties as Record<string, Mutable>).amount
        s.required.splice(3, 1)
      },
      [{ path: 'amount', kind: 'field-removed', breaks: ['readers'] }],
    ],
    [
      'an optional field removed',
      (s) => delete (s.properties as Record<string, Mutable>).note,
      [{ path: 'note', kind: 'field-removed', breaks: ['readers'] }],
    ],
    [
      'a field made optional',
      (s) => s.required.splice(0, 1),
      [{ path: 'orderId', kind: 'made-optional', breaks: ['readers'] }],
    ],
    [
      'a field made required',
      (s) => s.required.push('note'),
      [{ path: 'note', kind: 'made-required', breaks: ['writers'] }],
    ],
    [
      'an enum value added',
      (s) => s.properties.status.enum.push('held'),
      [{ path: 'status', kind: 'enum-values-added', breaks: ['readers'] }],
    ],
    [
      'an enum value removed',
      (s) => s.properties.status.enum.pop(),
      [{ path: 'status', kind: 'enum-values-removed', breaks: ['writers'] }],
    ],
    [
      'an enum put on a free string',
      (s) => (s.properties.note.enum = ['a']),
      [{ path: 'note', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'an enum taken off',
      (s) => delete (s.properties.status as Record<string, unknown>).enum,
      [{ path: 'status', kind: 'constraint-loosened', breaks: ['readers'] }],
    ],
    [
      'integer widened to number',
      (s) => (s.properties.amount.type = 'number'),
      [{ path: 'amount', kind: 'type-widened', breaks: ['readers'] }],
    ],
    [
      'integer widened to number inside a list',
      (s) => (s.properties.lines.items.properties.quantity.type = 'number'),
      [{ path: 'lines[].quantity', kind: 'type-widened', breaks: ['readers'] }],
    ],
    [
      'a type changed',
      (s) => (s.properties.amount = node({ type: 'string' })),
      [{ path: 'amount', kind: 'type-changed', breaks: ['readers', 'writers'] }],
    ],
    [
      'a maxLength lowered',
      (s) => (s.properties.note.maxLength = 100),
      [{ path: 'note', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a maxLength raised',
      (s) => (s.properties.note.maxLength = 300),
      [{ path: 'note', kind: 'constraint-loosened', breaks: ['readers'] }],
    ],
    [
      'a minimum raised inside a list',
      (s) => (s.properties.lines.items.properties.quantity.minimum = 2),
      [{ path: 'lines[].quantity', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a minimum made exclusive',
      (s) => {
        delete s.properties.amount.minimum
        s.properties.amount.exclusiveMinimum = 0
      },
      [{ path: 'amount', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a maximum dropped',
      (s) => delete s.properties.amount.maximum,
      [{ path: 'amount', kind: 'constraint-loosened', breaks: ['readers'] }],
    ],
    [
      'a maxItems lowered',
      (s) => (s.properties.lines.maxItems = 10),
      [{ path: 'lines', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a minItems dropped',
      (s) => delete s.properties.lines.minItems,
      [{ path: 'lines', kind: 'constraint-loosened', breaks: ['readers'] }],
    ],
    [
      'a required field added inside a list item',
      (s) => {
        s.properties.lines.items.properties.unitPrice = node({ type: 'integer' })
        s.properties.lines.items.required.push('unitPrice')
      },
      [{ path: 'lines[].unitPrice', kind: 'field-added', breaks: ['writers'] }],
    ],
    [
      'a format added',
      (s) => (s.properties.note.format = 'email'),
      [{ path: 'note', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a format removed',
      (s) => delete s.properties.orderId.format,
      [{ path: 'orderId', kind: 'constraint-loosened', breaks: ['readers'] }],
    ],
    [
      'a format changed',
      (s) => (s.properties.orderId.format = 'uri'),
      [{ path: 'orderId', kind: 'type-changed', breaks: ['readers', 'writers'] }],
    ],
    [
      'a pattern added',
      (s) => (s.properties.note.pattern = '^[a-z]+$'),
      [{ path: 'note', kind: 'constraint-tightened', breaks: ['writers'] }],
    ],
    [
      'a pattern changed inside allOf',
      (s) => (s.properties.name.allOf[1] = { pattern: '\\w' }),
      [
        { path: 'name', kind: 'constraint-tightened', breaks: ['writers'] },
        { path: 'name', kind: 'constraint-loosened', breaks: ['readers'] },
      ],
    ],
    [
      'the object closed',
      (s) => (s.additionalProperties = false),
      [{ path: '', kind: 'additional-properties-closed', breaks: ['writers'] }],
    ],
    [
      'annotations only (title, description, $comment, default)',
      (s) => {
        s.title = 'Other'
        s.$comment = 'x'
        s.properties.note.description = 'why'
        s.properties.note.default = ''
      },
      [],
    ],
    ['additionalProperties {} (open, as before)', (s) => (s.additionalProperties = {}), []],
  ]

/** Each row: a construct outside the subset, and the start of the message that refuses it. */
const UNSUPPORTED: Array<[string, (s: Mutable) => void, RegExp]> = [
  [
    'anyOf',
    (s) => (s.properties.note = node({ anyOf: [{ type: 'string' }, { type: 'null' }] })),
    /^note: keyword 'anyOf'/,
  ],
  ['$ref', (s) => (s.properties.note = node({ $ref: '#/$defs/Note' })), /^note: keyword '\$ref'/],
  [
    'const',
    (s) => (s.properties.status = node({ type: 'string', const: 'open' })),
    /^status: keyword 'const'/,
  ],
  [
    'a type list',
    (s) => (s.properties.note.type = ['string', 'null']),
    /^note: 'type' must be one type name/,
  ],
  [
    'additionalProperties as a schema',
    (s) => (s.additionalProperties = { type: 'string' }),
    /^\(payload\): 'additionalProperties' as a schema/,
  ],
  [
    'allOf with more than a pattern',
    (s) => s.properties.name.allOf.push({ minLength: 2 }),
    /^name: 'allOf' with an entry other than \{ pattern \}/,
  ],
  [
    'both minimum and exclusiveMinimum',
    (s) => (s.properties.amount.exclusiveMinimum = 0),
    /^amount: both 'minimum' and 'exclusiveMinimum'/,
  ],
  [
    'an array without items',
    (s) => delete (s.properties.lines as Record<string, unknown>).items,
    /^lines: an array without one 'items' schema/,
  ],
  ['multipleOf', (s) => (s.properties.amount.multipleOf = 5), /^amount: keyword 'multipleOf'/],
]

describe('diffSchemas', () => {
  it.each(TABLE)('when %s, then the verdict is as in the table', (_, edit, expected) => {
    expect(verdicts(edit)).toEqual(expected)
  })

  it('when the released side was closed and the change opens it, then readers break', () => {
    const closed = changed((s) => (s.additionalProperties = false))
    expect(diffSchemas(closed, released)).toEqual([
      {
        path: '',
        kind: 'additional-properties-opened',
        breaks: ['readers'],
        detail: 'additionalProperties allowed',
      },
    ])
  })

  it('when the released object was closed and an optional field is added, then readers break', () => {
    const closed = changed((s) => (s.additionalProperties = false))
    const added = changed((s) => {
      s.additionalProperties = false
      s.properties.channel = node({ type: 'string' })
    })
    expect(diffSchemas(closed, added)).toEqual([
      { path: 'channel', kind: 'field-added', breaks: ['readers'], detail: 'added, optional' },
    ])
  })

  it('when the released side was a number and the change makes it an integer, then writers break', () => {
    const number = changed((s) => (s.properties.amount.type = 'number'))
    expect(diffSchemas(number, released)).toEqual([
      { path: 'amount', kind: 'type-narrowed', breaks: ['writers'], detail: 'type number -> integer' },
    ])
  })

  it('when a change is found, then its detail says what changed in the schema’s terms', () => {
    expect(
      diffSchemas(
        released,
        changed((s) => (s.properties.note.maxLength = 100)),
      )[0]?.detail,
    ).toBe('maxLength 200 -> maxLength 100')
    expect(
      diffSchemas(
        released,
        changed((s) => s.properties.status.enum.push('held')),
      )[0]?.detail,
    ).toBe('added "held"')
  })

  it.each(UNSUPPORTED)(
    'when the current schema uses %s, then the classifier refuses to judge it',
    (_, edit, message) => {
      const judge = () => diffSchemas(released, changed(edit))
      expect(judge).toThrow(UnsupportedSchemaError)
      expect(judge).toThrow(message)
    },
  )

  it('when each event of docs/events is compared with itself, then the classifier understands it and finds nothing', () => {
    const dir = new URL('../../../../docs/events/', import.meta.url)
    const files = readdirSync(dir).filter((name) => name.endsWith('.json'))
    expect(files.length).toBeGreaterThan(0)
    for (const name of files) {
      const schema = JSON.parse(readFileSync(new URL(name, dir), 'utf8')) as JsonSchema
      expect(diffSchemas(schema, structuredClone(schema)), name).toEqual([])
    }
  })
})
