import { describe, expect, it } from 'vitest'
import { childTraceparent, followUp } from './follow-up.js'

const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
const parent = `00-${traceId}-00f067aa0ba902b7-01`

describe('followUp', () => {
  it('when a message caused the follow-up, then it keeps the correlation id and names the cause', () => {
    const context = followUp({
      id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
      correlationId: 'order-7',
      traceparent: parent,
    })
    expect(context.correlationId).toBe('order-7')
    expect(context.causationId).toBe('0190f1d2-3c4b-7a5e-8f00-000000000001')
    expect(context.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    expect(context.traceparent).not.toBe(parent)
  })

  it('when the cause had no traceparent, then the follow-up has none', () => {
    expect(
      followUp({ id: 'x', correlationId: 'order-7', traceparent: undefined }).traceparent,
    ).toBeUndefined()
  })
})

describe('childTraceparent', () => {
  it('when the random span id is all zeros, then another one is drawn', () => {
    const draws = [Buffer.alloc(8), Buffer.from('0102030405060708', 'hex')]
    expect(childTraceparent(parent, () => draws.shift() as Buffer)).toBe(`00-${traceId}-0102030405060708-01`)
  })

  it('when the parent is malformed or all-zero, then no traceparent is propagated', () => {
    for (const bad of [
      'garbage',
      `01-${traceId}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
    ]) {
      expect(childTraceparent(bad)).toBeUndefined()
    }
  })
})
