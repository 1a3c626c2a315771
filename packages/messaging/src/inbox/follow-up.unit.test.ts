import { describe, expect, it } from 'vitest'
import type { MessageContract, StandardSchemaV1 } from '../types.js'
import { childTraceparent, firstEvent, followUp, InvalidPayloadError, nextEvent } from './follow-up.js'

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

// A hand-written Standard Schema (messaging knows no zod): an object whose `amount` is a non-negative integer.
const amountSchema: StandardSchemaV1<unknown, { amount: number }> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) => {
      const amount = (value as { amount?: unknown }).amount
      return Number.isInteger(amount) && (amount as number) >= 0
        ? { value: { amount: amount as number } }
        : { issues: [{ message: 'must be a non-negative integer', path: [{ key: 'amount' }] }] }
    },
  },
}
const Charged: MessageContract<{ amount: number }> = {
  type: 'charge.made.v1',
  routingKey: 'charge.made',
  schema: amountSchema,
}
const cause = { id: '0190f1d2-3c4b-7a5e-8f00-000000000001', correlationId: 'order-7', traceparent: parent }
/** The fields a `charge.made.v1` of `amount` about `aggregateId` carries whatever caused it. */
const charge = (aggregateId: string, amount: number, occurredAt: Date) => ({
  type: 'charge.made.v1',
  routingKey: 'charge.made',
  payload: { amount },
  aggregateId,
  occurredAt,
})

describe('nextEvent', () => {
  it('when the payload satisfies its contract, then the message carries the schema output, aggregate, time and tracing', () => {
    const at = new Date('2026-01-31T12:00:00.000Z')
    const next = nextEvent(Charged, {
      cause,
      aggregateId: 'order-7',
      payload: { amount: 4499, extra: 'dropped' } as never,
      occurredAt: at,
    })
    expect(next).toMatchObject({
      ...charge('order-7', 4499, at),
      correlationId: 'order-7',
      causationId: cause.id,
    })
    expect(next.payload).toEqual({ amount: 4499 })
    expect(next.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
  })

  it('when the payload breaks its contract, then it throws naming the type and the field', () => {
    const invalid = { cause, aggregateId: 'order-7', payload: { amount: -1 }, occurredAt: new Date() }
    expect(() => nextEvent(Charged, invalid)).toThrow(InvalidPayloadError)
    expect(() => nextEvent(Charged, invalid)).toThrow(
      'charge.made.v1 payload is invalid: amount must be a non-negative integer',
    )
  })
})

describe('firstEvent', () => {
  it('when a request starts a process, then the event is correlated by its aggregate and has no cause', () => {
    const at = new Date('2026-01-31T12:00:00.000Z')
    const first = firstEvent(Charged, { aggregateId: 'order-8', payload: { amount: 10 }, occurredAt: at })
    expect(first).toEqual({ ...charge('order-8', 10, at), correlationId: 'order-8', traceparent: undefined })
    expect(first.causationId).toBeUndefined()
  })

  it('when a correlation id and a traceparent are given, then they are carried', () => {
    const options = {
      aggregateId: 'o',
      payload: { amount: 1 },
      occurredAt: new Date(),
      correlationId: 'saga-1',
    }
    expect(firstEvent(Charged, { ...options, traceparent: parent })).toMatchObject({
      correlationId: 'saga-1',
      traceparent: parent,
    })
  })

  it('when the payload breaks its contract, then it throws naming the type and the field', () => {
    const invalid = { aggregateId: 'order-8', payload: { amount: 1.5 }, occurredAt: new Date() }
    expect(() => firstEvent(Charged, invalid)).toThrow(
      'charge.made.v1 payload is invalid: amount must be a non-negative integer',
    )
  })
})
