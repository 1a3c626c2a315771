import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineEvent, type EventContract } from '../define.js'
import { allEvents, producers, sagaMap } from '../index.js'
import {
  OrderCreatedV1,
  OrderCreatedV1toV2,
  OrderCreatedV2,
  upcastOrderCreatedV1toV2,
  type OrderCreatedV1 as V1,
} from '../order.js'
import { eventJsonSchema } from '../json-schema.js'
import type { Reaction, ServiceName } from '../saga-map.js'
import { readCorpus } from './corpus.js'
import { formatReport, nextVersion, runGate, type ReleasedCorpus, type WorkingTree } from './gate.js'

const uuid = () => z.uuid()
/** A small fleet of its own: `thing.happened.v1` made by order, read by two handlers. */
const thingShape = { thingId: uuid(), size: z.enum(['S', 'M']), note: z.string().optional() }
/** `thing.happened.v1` with `fields` added to (or replacing) its released fields. */
const thingV1With = (fields: z.ZodRawShape) =>
  defineEvent('thing.happened.v1', z.object({ ...thingShape, ...fields }))
const ThingV1 = thingV1With({})
const releasedPayloads = [
  { thingId: '0190e0a0-0000-7000-8000-000000000001', size: 'S' },
  { thingId: '0190e0a0-0000-7000-8000-000000000002', size: 'M', note: 'gift' },
]
const corpusOf = (events: EventContract[]): ReleasedCorpus => ({
  schemas: new Map(events.map((e) => [e.type, eventJsonSchema(e)])),
  payloads: new Map([[ThingV1.type, releasedPayloads]]),
})
const reaction = (service: ServiceName, handler: string, reactsTo: EventContract): Reaction => ({
  service,
  handler,
  reactsTo,
  mayEmit: [],
})
const treeOf = (events: EventContract[], readers = true): WorkingTree => {
  const thing = events.find((e) => e.routingKey === 'thing.happened') ?? ThingV1
  return {
    events,
    reactions: readers
      ? [
          reaction('payment', 'charge-when-thing-happened', thing),
          reaction('shipment', 'ship-when-thing-happened', thing),
        ]
      : [],
    producers: { order: events, payment: [], inventory: [], shipment: [] },
  }
}

describe('the released corpus', () => {
  const corpus = readCorpus()

  it('when the corpus is read, then every released type has real payloads and a contract in the working tree', () => {
    const current = new Set<string>(allEvents.map((e) => e.type))
    expect(corpus.schemas.size).toBeGreaterThan(0)
    for (const type of corpus.schemas.keys()) {
      expect(current.has(type), `${type} is released but not declared`).toBe(true)
      expect(corpus.payloads.get(type)?.length ?? 0, `${type} has no captured payloads`).toBeGreaterThan(0)
    }
    expect([...corpus.payloads.keys()].filter((type) => !corpus.schemas.has(type))).toEqual([])
  })

  it('when each captured payload is parsed by the current zod schema of its version, then it parses', () => {
    for (const [type, payloads] of corpus.payloads) {
      const event = (allEvents as readonly EventContract[]).find((e) => e.type === type)
      payloads.forEach((payload, index) => {
        const issues = event?.schema.safeParse(payload).error?.issues
        expect(issues, `${type} payload ${index}`).toBeUndefined()
      })
    }
  })

  it('when the gate judges the working tree against it, then nothing is refused', () => {
    const report = runGate(corpus, { events: allEvents, reactions: sagaMap, producers })
    expect(report.refusals).toEqual([])
  })
})

describe('runGate: changes to a released type', () => {
  it('when a required field is added to a released type, then it is refused naming the field, consumers, producer and the way out', () => {
    const changed = thingV1With({ colour: z.string() })
    const report = runGate(corpusOf([ThingV1]), treeOf([changed]))
    expect(report.refusals.map(({ path, kind, breaks }) => ({ path, kind, breaks }))).toEqual([
      { path: 'colour', kind: 'field-added', breaks: ['writers'] },
      { path: 'colour', kind: 'payload-refused', breaks: ['writers'] },
    ])
    expect(report.refusals[0]).toMatchObject({
      type: 'thing.happened.v1',
      consumers: ['payment/charge-when-thing-happened', 'shipment/ship-when-thing-happened'],
      producer: 'order',
    })
    expect(report.refusals[1]?.detail).toMatch(/^2 of 2 captured payloads: /)
    const text = formatReport(report)
    expect(text).toContain('✗ thing.happened.v1 colour: field added (added, required)')
    expect(text).toContain('consumers: payment/charge-when-thing-happened, shipment/ship-when-thing-happened')
    expect(text).toContain('do: publish it as thing.happened.v2 beside thing.happened.v1, with an upcaster')
    expect(text).toContain('or make the field optional')
    expect(text).toMatch(/contracts:check: 2 breaking change\(s\) in thing\.happened\.v1\n$/)
  })

  it('when an enum value is added, then readers on the released schema break and the consumers are named', () => {
    const changed = thingV1With({ size: z.enum(['S', 'M', 'L']) })
    const [refusal, ...rest] = runGate(corpusOf([ThingV1]), treeOf([changed])).refusals
    expect(rest).toEqual([])
    expect(refusal).toMatchObject({
      path: 'size',
      kind: 'enum-values-added',
      breaks: ['readers'],
      detail: 'added "L"',
    })
  })
})

describe('runGate: fields removed', () => {
  it('when an optional field is removed, then it is refused: the released consumers no longer get a field they may read', () => {
    const changed = defineEvent('thing.happened.v1', z.object({ thingId: uuid(), size: z.enum(['S', 'M']) }))
    const report = runGate(corpusOf([ThingV1]), treeOf([changed]))
    expect(report.refusals).toMatchObject([{ path: 'note', kind: 'field-removed', breaks: ['readers'] }])
    expect(formatReport(report)).toContain(
      'breaks: consumers still on the released schema no longer get a field their handlers may read',
    )
  })

  it('when a required field is removed, then the released consumers refuse every new message', () => {
    const changed = defineEvent(
      'thing.happened.v1',
      z.object({ size: z.enum(['S', 'M']), note: z.string().optional() }),
    )
    const report = runGate(corpusOf([ThingV1]), treeOf([changed]))
    expect(report.refusals).toMatchObject([
      { path: 'thingId', kind: 'field-removed', detail: 'removed (was required)' },
    ])
    expect(formatReport(report)).toContain(
      'breaks: consumers still on the released schema refuse what the new producer writes (dead-lettered)',
    )
  })
})

describe('runGate: new, removed and unconsumed types', () => {
  it('when the change comes as a new version beside the released one, then it passes as a new type', () => {
    const v2 = defineEvent('thing.happened.v2', z.object({ thingId: uuid(), size: z.enum(['S', 'M', 'L']) }))
    const report = runGate(corpusOf([ThingV1]), treeOf([ThingV1, v2]))
    expect(report.refusals).toEqual([])
    expect(report.newTypes).toEqual(['thing.happened.v2'])
    expect(formatReport(report)).toContain('✓ thing.happened.v2: new, not released yet')
  })

  it('when an optional field is added, then it passes and is listed as compatible', () => {
    const changed = thingV1With({ colour: z.string().optional() })
    const report = runGate(corpusOf([ThingV1]), treeOf([changed]))
    expect(report.refusals).toEqual([])
    expect(formatReport(report)).toContain('✓ thing.happened.v1 colour: field added (added, optional)')
  })

  it('when a released type is no longer declared, then it is refused', () => {
    const report = runGate(corpusOf([ThingV1]), treeOf([]))
    expect(report.refusals).toMatchObject([{ type: 'thing.happened.v1', kind: 'event-removed' }])
    expect(formatReport(report)).toContain(
      'do: keep it declared until no running build publishes or consumes it, then cut a release of the corpus without it',
    )
  })

  it('when a type nobody consumes changes in a breaking way, then the change is let through as harmless', () => {
    const changed = defineEvent(
      'thing.happened.v1',
      z.object({ thingId: uuid(), size: z.enum(['S', 'M', 'L']) }),
    )
    const report = runGate({ ...corpusOf([ThingV1]), payloads: new Map() }, treeOf([changed], false))
    expect(report.refusals).toEqual([])
    expect(report.accepted.map((a) => a.change.kind)).toEqual(['enum-values-added', 'field-removed'])
  })

  it('when the next version is named, then only the version number moves', () => {
    expect(nextVersion('stock.reservation-failed.v1')).toBe('stock.reservation-failed.v2')
    expect(nextVersion('order.created.v9')).toBe('order.created.v10')
  })
})

describe('runGate: a consumer of a new version reading the old one through an upcaster', () => {
  const corpus = readCorpus()
  /** The fleet's map with payment's reaction moved to order.created.v2, reading v1 through `alsoReads`. */
  const movedTo = (alsoReads: Reaction['alsoReads']): WorkingTree => ({
    events: allEvents,
    producers,
    reactions: sagaMap.map((r) =>
      r.handler === 'process-payment-when-order-created' ? { ...r, reactsTo: OrderCreatedV2, alsoReads } : r,
    ),
  })
  const payment = 'payment/process-payment-when-order-created'

  it('when payment reads v2 and upcasts v1, then nothing is refused and it is listed as a consumer of both versions', () => {
    const report = runGate(corpus, movedTo([OrderCreatedV1toV2]))
    expect(report.refusals).toEqual([])
    expect(report.versions).toEqual([
      { type: 'order.created.v1', consumers: [payment], notReadBy: [] },
      { type: 'order.created.v2', consumers: [payment], notReadBy: [] },
    ])
    expect(formatReport(report)).toContain(`• order.created.v1 read by ${payment}\n`)
    expect(formatReport(report)).toContain(`• order.created.v2 read by ${payment}\n`)
  })

  it('when the fleet map is judged, then v2 is new and payment reads both versions', () => {
    const report = runGate(corpus, { events: allEvents, reactions: sagaMap, producers })
    expect(report.newTypes).toEqual(['order.created.v2'])
    expect(report.refusals).toEqual([])
    expect(report.versions).toEqual([
      { type: 'order.created.v1', consumers: [payment], notReadBy: [] },
      { type: 'order.created.v2', consumers: [payment], notReadBy: [] },
    ])
  })

  it('when an upcaster writes a payload v2 refuses, then it is refused naming the field, the consumer and the older type', () => {
    const wrongTotal = {
      from: OrderCreatedV1,
      upcast: (p: V1) => ({
        ...upcastOrderCreatedV1toV2(p),
        total: { amount: p.totalAmount + 1, currency: p.currency },
      }),
    }
    const report = runGate(corpus, movedTo([wrongTotal]))
    const captured = corpus.payloads.get('order.created.v1')?.length ?? 0
    expect(report.refusals).toEqual([
      {
        type: 'order.created.v2',
        path: 'total.amount',
        kind: 'upcast-refused',
        breaks: ['writers'],
        detail: `${captured} of ${captured} captured order.created.v1 payloads, upcast by ${payment}: must equal the sum of quantity x unitPrice over the lines`,
        consumers: [payment],
        producer: 'order',
      },
    ])
    const text = formatReport(report)
    expect(text).toContain('✗ order.created.v2 total.amount: upcast refused (')
    expect(text).toContain('do: fix the upcaster')
    expect(text).toMatch(/contracts:check: 1 breaking change\(s\) in order\.created\.v2\n$/)
  })

  it('when an upcaster throws, then it is refused with its message', () => {
    const throwing = {
      from: OrderCreatedV1,
      upcast: (): never => {
        throw new Error('no rate for currency')
      },
    }
    const [refusal, ...rest] = runGate(corpus, movedTo([throwing])).refusals
    expect(rest).toEqual([])
    expect(refusal).toMatchObject({ kind: 'upcast-refused', path: '' })
    expect(refusal?.detail).toMatch(/upcast by .*: the upcaster threw: no rate for currency$/)
  })
})

describe('runGate: a consumer still on the old version', () => {
  const corpus = readCorpus()
  const payment = 'payment/process-payment-when-order-created'

  it('when payment reads v1 only, then v2 is new and listed as held there', () => {
    const report = runGate(corpus, {
      events: allEvents,
      producers,
      reactions: sagaMap.map((r) =>
        r.handler === 'process-payment-when-order-created'
          ? { ...r, reactsTo: OrderCreatedV1, alsoReads: undefined }
          : r,
      ),
    })
    expect(report.newTypes).toEqual(['order.created.v2'])
    expect(report.versions).toEqual([
      { type: 'order.created.v1', consumers: [payment], notReadBy: [] },
      { type: 'order.created.v2', consumers: [], notReadBy: [payment] },
    ])
    expect(formatReport(report)).toContain(
      `• order.created.v2 read by no consumer in the saga map; not read by ${payment} (held there)`,
    )
  })
})
