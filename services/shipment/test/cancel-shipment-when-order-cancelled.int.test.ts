import { randomUUID } from 'node:crypto'
import { ShipmentCancelled, ShipmentCreated, StockReserved } from '@saga/contracts'
import { consumed, deliver, memoryLogger, outboxOf } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import { cancelShipmentWhenOrderCancelled } from '../src/reactions/cancel-shipment-when-order-cancelled.js'
import { createShipmentWhenStockReserved } from '../src/reactions/create-shipment-when-stock-reserved.js'
import { orderCancelled, outboxOfType, useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'

const db = useServiceTestDatabase(database, 'shipment_cancel')
const logger = memoryLogger()
const now = new Date('2026-11-30T12:00:00.000Z')
const deps = { logger, clock: () => now }
const create = createShipmentWhenStockReserved(deps, 'demo-carrier')
const cancel = cancelShipmentWhenOrderCancelled(deps)

function order(country: 'DE' | 'AQ' = 'DE') {
  const orderId = randomUUID()
  const reserved = consumed(
    StockReserved,
    {
      orderId,
      customerId: randomUUID(),
      lines: [{ sku: 'MUG-001', quantity: 1, unitPrice: 1250 }],
      shippingAddress: { name: 'Ada', line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country },
      reservedAt: now.toISOString(),
    },
    orderId,
  )
  const cancelled = (reason?: string) => orderCancelled(orderId, reason, now)
  return { orderId, reserved, cancelled }
}

const emitted = (orderId: string, type: string) => outboxOfType(db.pool, orderId, type)
const shipments = (orderId: string) => db.prisma.shipment.findMany({ where: { orderId } })

describe('cancel-shipment-when-order-cancelled', () => {
  it('when an order with a CREATED shipment is cancelled, then the shipment is CANCELLED and one ShipmentCancelled is emitted', async () => {
    const o = order()
    await deliver(db.pool, create, o.reserved)
    const message = o.cancelled('deadline_exceeded')

    expect(await deliver(db.pool, cancel, message)).toBe('handled')

    const [shipment, ...more] = await shipments(o.orderId)
    expect(more).toEqual([])
    expect(shipment).toMatchObject({
      status: 'CANCELLED',
      cancelledAt: now,
      cancelReason: 'deadline_exceeded',
    })
    const facts = await emitted(o.orderId, ShipmentCancelled.type)
    expect(facts).toHaveLength(1)
    expect(ShipmentCancelled.schema.parse(facts[0]?.payload)).toEqual({
      orderId: o.orderId,
      shipmentId: shipment?.id,
      reason: 'deadline_exceeded',
      cancelledAt: now.toISOString(),
    })
    expect(facts[0]?.headers).toMatchObject({ correlationId: o.orderId, causationId: message.id })
  })

  it('when OrderCancelled arrives before StockReserved, then no shipment is booked and nothing is emitted', async () => {
    const o = order()

    expect(await deliver(db.pool, cancel, o.cancelled())).toBe('handled')
    expect(await deliver(db.pool, create, o.reserved)).toBe('handled')

    expect(await shipments(o.orderId)).toEqual([])
    expect(await outboxOf(db.pool, o.orderId)).toEqual([])
    expect(await db.prisma.cancelledOrder.count({ where: { orderId: o.orderId } })).toBe(1)
  })

  it('when the order is cancelled while CARRIER_ACCOUNT is missing, then its late StockReserved is settled without the carrier', async () => {
    const o = order()
    const unconfigured = createShipmentWhenStockReserved(deps, '')
    await deliver(db.pool, cancel, o.cancelled('deadline_exceeded'))

    expect(await deliver(db.pool, unconfigured, o.reserved)).toBe('handled')

    expect(await shipments(o.orderId)).toEqual([])
    expect(await outboxOf(db.pool, o.orderId)).toEqual([])
  })

  it('when the carrier refused the order and it is then cancelled, then nothing changes and nothing is emitted', async () => {
    const o = order('AQ')
    await deliver(db.pool, create, o.reserved)

    expect(await deliver(db.pool, cancel, o.cancelled('unsupported_country'))).toBe('handled')

    expect(await shipments(o.orderId)).toEqual([])
    expect(await emitted(o.orderId, ShipmentCancelled.type)).toEqual([])
  })

  it('when OrderCancelled is redelivered, or sent again under a new id, then the shipment is cancelled once', async () => {
    const o = order()
    await deliver(db.pool, create, o.reserved)
    const message = o.cancelled()

    expect(await deliver(db.pool, cancel, message)).toBe('handled')
    expect(await deliver(db.pool, cancel, message)).toBe('duplicate')
    expect(await deliver(db.pool, cancel, o.cancelled('deadline_exceeded'))).toBe('handled')

    expect(await shipments(o.orderId)).toMatchObject([
      { status: 'CANCELLED', cancelReason: 'customer_requested' },
    ])
    expect(await emitted(o.orderId, ShipmentCancelled.type)).toHaveLength(1)
  })

  it('when StockReserved and OrderCancelled are handled at the same moment, then no shipment stays CREATED (20 orders)', async () => {
    const orders = Array.from({ length: 20 }, () => order())
    await Promise.all(
      orders.flatMap((o) => [deliver(db.pool, create, o.reserved), deliver(db.pool, cancel, o.cancelled())]),
    )

    for (const o of orders) {
      const rows = await shipments(o.orderId)
      expect(rows.filter((s) => s.status === 'CREATED')).toEqual([])
      // A shipment booked before the cancel is cancelled and announced; one after it is never booked.
      expect((await emitted(o.orderId, ShipmentCancelled.type)).length).toBe(rows.length)
      expect((await emitted(o.orderId, ShipmentCreated.type)).length).toBe(rows.length)
    }
  })
})
