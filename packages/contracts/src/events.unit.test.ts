import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { allEvents, type EventContract } from './index.js'
import { OrderCreated } from './order.js'
import { PaymentFailed, PaymentProcessed } from './payment.js'
import { StockReservationFailed } from './inventory.js'
import { ShipmentFailed } from './shipment.js'

const now = () => new Date().toISOString()
const lines = [
  { sku: 'MUG-01', quantity: 2, unitPrice: 1250 },
  { sku: 'TEE-M', quantity: 1, unitPrice: 1999 },
]
const shippingAddress = {
  name: 'Ana Lima',
  line1: 'Rua 1',
  city: 'Porto',
  postalCode: '4000-001',
  country: 'PT',
}
/** The fields PaymentProcessed and PaymentFailed share: whose order, which payment, how much. */
const charge = () => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  paymentId: randomUUID(),
  amount: 4499,
  currency: 'EUR',
})
const orderCreated = () => ({
  orderId: randomUUID(),
  customerId: randomUUID(),
  currency: 'EUR',
  lines,
  totalAmount: 4499,
  shippingAddress,
  paymentMethod: 'tok_visa',
  createdAt: now(),
})
const paths = (event: EventContract, payload: unknown) =>
  event.schema.safeParse(payload).error?.issues.map((issue) => issue.path.join('.')) ?? []

describe('events', () => {
  it('when the chain is listed, then every event has a distinct type `<routingKey>.v<N>`, versions of one event in order from v1', () => {
    expect(allEvents).toHaveLength(13)
    expect(new Set(allEvents.map((event) => event.type)).size).toBe(13)
    const versions = new Map<string, number[]>()
    for (const event of allEvents) {
      expect(event.type).toMatch(new RegExp(`^${event.routingKey.replaceAll('.', '\\.')}\\.v\\d+$`))
      const n = Number(event.type.slice(event.routingKey.length + 2))
      versions.set(event.routingKey, [...(versions.get(event.routingKey) ?? []), n])
    }
    for (const [key, list] of versions) expect(list, key).toEqual(list.map((_, i) => i + 1))
    expect(versions.get('order.created')).toEqual([1, 2])
  })

  it('when a contract validates through Standard Schema, then the good passes and the bad carries its path', async () => {
    const good = await OrderCreated.schema['~standard'].validate(orderCreated())
    expect(good.issues).toBeUndefined()
    const bad = await OrderCreated.schema['~standard'].validate({ ...orderCreated(), currency: 'EURO' })
    expect(bad.issues?.map((issue) => issue.path)).toEqual([['currency']])
  })

  it('when OrderCreated is valid, then it parses to the same data', () => {
    const payload = orderCreated()
    expect(OrderCreated.schema.parse(payload)).toEqual(payload)
  })

  it('when OrderCreated total does not match its lines, then totalAmount is named', () => {
    expect(paths(OrderCreated, { ...orderCreated(), totalAmount: 4498 })).toEqual(['totalAmount'])
  })

  it('when OrderCreated has bad fields, then each one is named with its path', () => {
    const payload = {
      ...orderCreated(),
      orderId: 'not-a-uuid',
      lines: [{ sku: 'MUG-01', quantity: 0, unitPrice: 1250 }],
      shippingAddress: { ...shippingAddress, country: 'XX' },
      createdAt: 'yesterday',
    }
    expect(paths(OrderCreated, payload).sort()).toEqual(
      ['createdAt', 'lines.0.quantity', 'orderId', 'shippingAddress.country'].sort(),
    )
    expect(paths(OrderCreated, { ...orderCreated(), lines: [] })).toEqual(['lines'])
  })

  it('when a producer adds a field, then consumers still accept the event (additive change, same version)', () => {
    expect(paths(OrderCreated, { ...orderCreated(), channel: 'web' })).toEqual([])
  })

  it('when failure events carry a reason, then it must be a snake_case code', () => {
    const failed = { ...charge(), reason: 'card_declined', failedAt: now() }
    expect(paths(PaymentFailed, failed)).toEqual([])
    expect(paths(PaymentFailed, { ...failed, reason: 'Card Declined!' })).toEqual(['reason'])
    const stock = { orderId: randomUUID(), customerId: randomUUID(), reason: 'out_of_stock', failedAt: now() }
    expect(
      paths(StockReservationFailed, {
        ...stock,
        unavailable: [{ sku: 'MUG-01', requested: 2, available: 1 }],
      }),
    ).toEqual([])
    expect(paths(StockReservationFailed, stock)).toEqual(['unavailable'])
    const shipment = {
      orderId: randomUUID(),
      reason: 'unsupported_country',
      country: 'AQ',
      lines,
      failedAt: now(),
    }
    expect(paths(ShipmentFailed, shipment)).toEqual([])
  })

  it('when PaymentProcessed lacks what the next steps need, then the missing fields are named', () => {
    const processed = { ...charge(), processedAt: now() }
    expect(paths(PaymentProcessed, processed).sort()).toEqual(['lines', 'shippingAddress'])
    expect(paths(PaymentProcessed, { ...processed, lines, shippingAddress })).toEqual([])
    expect(paths(PaymentProcessed, { ...processed, lines, shippingAddress, amount: -1 })).toEqual(['amount'])
  })
})
