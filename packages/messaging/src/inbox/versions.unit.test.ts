import { describe, expect, it } from 'vitest'
import { TopologyError } from '../topology.js'
import type { HandlerDefinition, MessageContract, StandardSchemaV1, Upcaster } from '../types.js'
import { checkUpcasts, holdDelayMs, parseForHandler, versionOrder } from './versions.js'

// Hand-made Standard Schemas, so the unit test needs no zod.
const schemaOf = <P>(
  check: (value: Record<string, unknown>) => P | string,
): StandardSchemaV1<unknown, P> => ({
  '~standard': {
    version: 1,
    vendor: 'test',
    validate(value) {
      const result = check((value ?? {}) as Record<string, unknown>)
      return typeof result === 'string' ? { issues: [{ message: result }] } : { value: result }
    },
  },
})
interface V1 {
  orderId: string
  total: number
}
interface V2 {
  orderId: string
  total: { amount: number; currency: string }
}
const V1: MessageContract<V1> = {
  type: 'order.created.v1',
  routingKey: 'order.created',
  schema: schemaOf((v) => (typeof v.total === 'number' ? (v as unknown as V1) : 'total: expected a number')),
}
const V2: MessageContract<V2> = {
  type: 'order.created.v2',
  routingKey: 'order.created',
  schema: schemaOf((v) => (typeof v.total === 'object' ? (v as unknown as V2) : 'total: expected an object')),
}
const V3: MessageContract = { ...V2, type: 'order.created.v3' }
const toV2: Upcaster<V2, V1> = {
  from: V1,
  upcast: (p) => ({ orderId: p.orderId, total: { amount: p.total, currency: 'EUR' } }),
}
const handlerOf = <P>(message: MessageContract<P>, upcasts?: Upcaster<P>[]): HandlerDefinition<never, P> => ({
  name: 'take-order',
  message,
  upcasts,
  handle: () => Promise.resolve(),
})
const delivery = (type: string, data: unknown) => ({
  routingKey: 'order.created',
  content: Buffer.from(
    JSON.stringify({
      specversion: '1.0',
      id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
      source: 'order',
      type,
      data,
    }),
  ),
})

describe('parseForHandler', () => {
  it('when a v1 comes to a v2 handler with an upcaster from v1, then the handler gets the upcast payload under the wire type', async () => {
    const parsed = await parseForHandler(
      delivery('order.created.v1', { orderId: 'o-1', total: 12 }),
      handlerOf(V2, [toV2]),
    )
    expect(parsed.ok).toBe(true)
    expect(parsed.ok === true && parsed.message).toMatchObject({
      id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
      type: 'order.created.v1',
      payload: { orderId: 'o-1', total: { amount: 12, currency: 'EUR' } },
    })
  })

  it('when any step of an upcast fails, then it is poison with a reason naming the step', async () => {
    const handler = handlerOf(V2, [toV2])
    const older = await parseForHandler(delivery('order.created.v1', { orderId: 'o-1', total: 'x' }), handler)
    expect(older.ok === false && older.reason).toBe(
      "upcast from 'order.created.v1' to 'order.created.v2': invalid payload: total: expected a number",
    )
    const throwing = handlerOf(V2, [
      {
        from: V1,
        upcast: () => {
          throw new Error('no currency')
        },
      },
    ])
    const threw = await parseForHandler(delivery('order.created.v1', { orderId: 'o-1', total: 1 }), throwing)
    expect(threw.ok === false && threw.reason).toBe(
      "upcast from 'order.created.v1' to 'order.created.v2': upcaster threw: no currency",
    )
    const wrong = handlerOf(V2, [{ from: V1, upcast: (p) => p as unknown as V2 }])
    const result = await parseForHandler(delivery('order.created.v1', { orderId: 'o-1', total: 1 }), wrong)
    expect(result.ok === false && result.reason).toBe(
      "upcast from 'order.created.v1' to 'order.created.v2': its result: invalid payload: total: expected an object",
    )
  })

  it('when a newer version comes to a v1 handler, then it is to be held, whatever its payload', async () => {
    const parsed = await parseForHandler(delivery('order.created.v3', { anything: true }), handlerOf(V1))
    expect(parsed).toEqual({
      ok: 'newer',
      id: '0190f1d2-3c4b-7a5e-8f00-000000000001',
      type: 'order.created.v3',
    })
  })

  it('when an older version has no upcaster, or another event comes, then it is poison', async () => {
    const older = await parseForHandler(
      delivery('order.created.v1', { orderId: 'o-1', total: 1 }),
      handlerOf(V3),
    )
    expect(older.ok === false && older.reason).toBe(
      "no upcaster from 'order.created.v1' to 'order.created.v3'",
    )
    const other = await parseForHandler(delivery('order.cancelled.v2', {}), handlerOf(V1))
    expect(other.ok === false && other.reason).toMatch(/type: 'order.cancelled.v2' is not the handled type/)
  })
})

describe('versionOrder, holdDelayMs', () => {
  it('orders versions of one event only', () => {
    expect(versionOrder('order.created.v10', 'order.created.v9')).toBe(1)
    expect(versionOrder('order.created.v1', 'order.created.v2')).toBe(-1)
    expect(versionOrder('order.cancelled.v2', 'order.created.v1')).toBe(0)
    expect(versionOrder('order.created', 'order.created.v1')).toBe(0)
  })

  it('holds 1 s first, doubling, at most 60 s', () => {
    expect([1, 2, 3, 6, 7, 40].map(holdDelayMs)).toEqual([1000, 2000, 4000, 32_000, 60_000, 60_000])
  })
})

describe('checkUpcasts', () => {
  it('refuses an upcaster from the own type, two from one type, or one on another routing key', () => {
    expect(() => checkUpcasts(handlerOf(V2, [toV2]))).not.toThrow()
    expect(() => checkUpcasts(handlerOf(V1, [{ from: V1, upcast: (p: V1) => p }]))).toThrow(
      new TopologyError(
        "handler 'take-order': upcaster from 'order.created.v1': that is the handler's own type",
      ),
    )
    expect(() => checkUpcasts(handlerOf(V2, [toV2, toV2]))).toThrow(/upcaster from 'order.created.v1': twice/)
    const elsewhere = { ...toV2, from: { ...V1, routingKey: 'order.placed' } }
    expect(() => checkUpcasts(handlerOf(V2, [elsewhere]))).toThrow(
      "routing key 'order.placed', not the handler's 'order.created'",
    )
  })
})
