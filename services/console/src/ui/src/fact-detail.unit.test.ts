import { describe, expect, it } from 'vitest'
import type { FactNode } from './api.js'
import { cloudEventAttributes, payloadText, traceLink } from './fact-detail.js'

const fact = (overrides: Partial<FactNode>): FactNode => ({
  id: '0193a000-0000-7000-8000-000000000001',
  type: 'payment.processed.v1',
  routingKey: 'payment.processed',
  producer: 'payment',
  branch: 'forward',
  kind: 'step',
  state: 'published',
  causationId: '0193a000-0000-7000-8000-000000000000',
  attempts: 1,
  lastError: null,
  occurredAt: '2026-12-01T12:00:01.000Z',
  publishedAt: '2026-12-01T12:00:01.010Z',
  failedAt: null,
  consumers: [],
  deadLetters: [],
  late: false,
  note: null,
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  aggregateId: 'c0ffee00-0000-4000-8000-000000000000',
  payload: { orderId: 'c0ffee00-0000-4000-8000-000000000000', amount: 1200 },
  headers: {
    correlationId: 'c0ffee00-0000-4000-8000-000000000000',
    causationId: '0193a000-0000-7000-8000-000000000000',
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  },
  ...overrides,
})

describe('cloudEventAttributes', () => {
  it("when the producer's row was read, then the envelope's attributes as the relay publishes them, absent ones left out", () => {
    expect(cloudEventAttributes(fact({}))).toEqual([
      ['specversion', '1.0'],
      ['id', '0193a000-0000-7000-8000-000000000001'],
      ['source', 'payment'],
      ['type', 'payment.processed.v1'],
      ['time', '2026-12-01T12:00:01.000Z'],
      ['subject', 'c0ffee00-0000-4000-8000-000000000000'],
      ['datacontenttype', 'application/json'],
      ['correlationid', 'c0ffee00-0000-4000-8000-000000000000'],
      ['causationid', '0193a000-0000-7000-8000-000000000000'],
      ['traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
    ])
  })

  it("when the producer stored the fact's own time, then that is `time`", () => {
    const stored = fact({ headers: { correlationId: 'c', occurredAt: '2026-12-01T11:59:59.000Z' } })
    expect(cloudEventAttributes(stored)).toContainEqual(['time', '2026-12-01T11:59:59.000Z'])
  })

  it("when the producer's row was not read, then no attributes (nothing is guessed)", () => {
    expect(cloudEventAttributes(fact({ headers: null }))).toEqual([])
  })
})

describe('traceLink and payloadText', () => {
  it('when a template and a trace id are known, then the link; else none', () => {
    expect(traceLink('http://jaeger:16686/trace/{traceId}', 'abc')).toBe('http://jaeger:16686/trace/abc')
    expect(traceLink(null, 'abc')).toBeNull()
    expect(traceLink('http://jaeger/{traceId}', null)).toBeNull()
  })

  it('when there is a payload, then indented JSON; else a note', () => {
    expect(payloadText({ a: 1 })).toBe('{\n  "a": 1\n}')
    expect(payloadText(null)).toBe('no payload read')
  })
})
