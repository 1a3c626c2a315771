import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { readCorpus } from './compat/corpus.js'
import {
  downcastOrderCreatedV2toV1,
  OrderCreated,
  OrderCreatedV1,
  OrderCreatedV1toV2,
  OrderCreatedV2,
  upcastOrderCreatedV1toV2,
  type OrderCreatedV1 as V1,
  type OrderCreatedV2 as V2,
} from './order.js'

/** A v1 payload with v1's keys in v1's order, as the order service has always written it. */
const v1 = (): V1 => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  currency: 'JPY',
  lines: [
    { sku: 'MUG-01', quantity: 2, unitPrice: 1250 },
    { sku: 'TEE-M', quantity: 1, unitPrice: 1999 },
  ],
  totalAmount: 4499,
  shippingAddress: { name: 'Ana Lima', line1: 'Rua 1', city: 'Porto', postalCode: '4000-001', country: 'PT' },
  paymentMethod: 'tok_visa',
  createdAt: '2026-12-06T12:00:00.000Z',
})

const capturedV1 = readCorpus().payloads.get(OrderCreatedV1.type) ?? []

describe('order.created versions', () => {
  it('when OrderCreated is named, then it is v1 (consumers move to v2 one by one)', () => {
    expect(OrderCreated).toBe(OrderCreatedV1)
    expect(OrderCreatedV2).toMatchObject({ type: 'order.created.v2', routingKey: 'order.created' })
    expect(OrderCreatedV2.dataschema).toBe('urn:saga:event:order.created.v2')
  })

  it('when a v1 payload is upcast, then v2 carries the same facts with money as one total value', () => {
    const payload = v1()
    const up = upcastOrderCreatedV1toV2(payload)
    expect(up).toEqual({
      orderId: payload.orderId,
      customerId: payload.customerId,
      total: { amount: 4499, currency: 'JPY' },
      lines: payload.lines,
      shippingAddress: payload.shippingAddress,
      paymentMethod: 'tok_visa',
      createdAt: payload.createdAt,
    })
    expect(OrderCreatedV2.schema.parse(up)).toEqual(up)
    expect(OrderCreatedV1toV2.from).toBe(OrderCreatedV1)
    expect(OrderCreatedV1toV2.upcast(payload)).toEqual(up)
  })

  it('when v1 goes up and back down, then the payload is deep-equal and the same JSON text', () => {
    const payload = v1()
    const back = downcastOrderCreatedV2toV1(upcastOrderCreatedV1toV2(payload))
    expect(back).toEqual(payload)
    expect(JSON.stringify(back)).toBe(JSON.stringify(payload))
  })

  it('when v2 goes down and back up, then the payload is deep-equal', () => {
    const payload: V2 = upcastOrderCreatedV1toV2(v1())
    const down = downcastOrderCreatedV2toV1(payload)
    expect(OrderCreatedV1.schema.parse(down)).toEqual(down)
    expect(upcastOrderCreatedV1toV2(down)).toEqual(payload)
    expect(JSON.stringify(upcastOrderCreatedV1toV2(down))).toBe(JSON.stringify(payload))
  })

  it('when a payload is upcast or downcast, then its input is left as it was', () => {
    const payload = v1()
    const before = JSON.stringify(payload)
    const up = upcastOrderCreatedV1toV2(payload)
    const upBefore = JSON.stringify(up)
    downcastOrderCreatedV2toV1(up)
    expect(JSON.stringify(payload)).toBe(before)
    expect(JSON.stringify(up)).toBe(upBefore)
  })

  it('when every captured v1 payload of the released corpus is upcast, then v2 takes it, and downcasting gives back the same JSON text', () => {
    expect(capturedV1.length).toBeGreaterThan(0)
    capturedV1.forEach((captured, index) => {
      const parsed = OrderCreatedV1.schema.parse(captured)
      const up = upcastOrderCreatedV1toV2(parsed)
      expect(OrderCreatedV2.schema.safeParse(up).error?.issues, `payload ${index}`).toBeUndefined()
      const back = downcastOrderCreatedV2toV1(up)
      expect(back, `payload ${index}`).toEqual(captured)
      expect(JSON.stringify(back), `payload ${index}`).toBe(JSON.stringify(captured))
    })
  })
})

describe('order.created.v2 schema', () => {
  it('when a v2 total does not match its lines, then total.amount is named', () => {
    const payload = upcastOrderCreatedV1toV2(v1())
    const wrong = { ...payload, total: { ...payload.total, amount: 4498 } }
    expect(OrderCreatedV2.schema.safeParse(wrong).error?.issues.map((i) => i.path)).toEqual([
      ['total', 'amount'],
    ])
    const bad = { ...payload, total: { amount: 1.5, currency: 'EURO' } }
    expect(
      OrderCreatedV2.schema
        .safeParse(bad)
        .error?.issues.map((i) => i.path.join('.'))
        .sort(),
    ).toEqual(['total.amount', 'total.currency'])
  })

  it('when a v2 payload still has v1 money fields only, then v2 refuses it (total is required)', () => {
    expect(OrderCreatedV2.schema.safeParse(v1()).error?.issues.map((i) => i.path.join('.'))).toEqual([
      'total',
    ])
  })
})
