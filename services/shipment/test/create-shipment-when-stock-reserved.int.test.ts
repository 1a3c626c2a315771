import { randomUUID } from 'node:crypto'
import { ShipmentCreated, ShipmentFailed, StockReserved } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { CARRIER_NAME, trackingNumberFor } from '../src/domain/carrier.js'
import {
  createShipmentWhenStockReserved,
  MissingSettingError,
} from '../src/reactions/create-shipment-when-stock-reserved.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { consumed, deliver, memoryLogger } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'shipment')
const logger = memoryLogger()
const handler = createShipmentWhenStockReserved({ logger, clock: () => new Date() }, 'demo-carrier')

function stockReserved(country: 'DE' | 'AQ' | 'US') {
  const orderId = randomUUID()
  return consumed(
    StockReserved,
    {
      orderId,
      customerId: randomUUID(),
      lines: [{ sku: 'MUG-001', quantity: 2, unitPrice: 1250 }],
      shippingAddress: { name: 'Ada', line1: 'Main St 1', city: 'Somewhere', postalCode: '12345', country },
      reservedAt: new Date().toISOString(),
    },
    orderId,
  )
}

async function outbox(orderId: string) {
  const { rows } = await db.pool.query<{
    type: string
    routing_key: string
    payload: unknown
    headers: unknown
  }>('SELECT type, routing_key, payload, headers FROM outbox_message WHERE aggregate_id = $1', [orderId])
  return rows
}

describe('create-shipment-when-stock-reserved', () => {
  it('when the country is supported, then one shipment is created and exactly one ShipmentCreated is in the outbox', async () => {
    const message = stockReserved('DE')
    const { orderId } = message.payload

    expect(await deliver(db.pool, handler, message)).toBe('handled')

    const shipments = await db.prisma.shipment.findMany({ where: { orderId } })
    expect(shipments).toHaveLength(1)
    expect(shipments[0]).toMatchObject({
      carrier: CARRIER_NAME,
      carrierAccount: 'demo-carrier',
      trackingNumber: trackingNumberFor(orderId, 'demo-carrier'),
      status: 'CREATED',
      country: 'DE',
      address: message.payload.shippingAddress,
    })
    const rows = await outbox(orderId)
    expect(rows.map((row) => [row.type, row.routing_key])).toEqual([
      [ShipmentCreated.type, ShipmentCreated.routingKey],
    ])
    expect(rows[0]?.headers).toMatchObject({ correlationId: orderId, causationId: message.id })
    expect(ShipmentCreated.schema.parse(rows[0]?.payload)).toMatchObject({
      orderId,
      shipmentId: shipments[0]?.id,
      carrier: CARRIER_NAME,
      trackingNumber: shipments[0]?.trackingNumber,
    })
  })

  it('when the country is unsupported (AQ), then no shipment exists and ShipmentFailed carries the reason and lines', async () => {
    const message = stockReserved('AQ')
    const { orderId } = message.payload

    await deliver(db.pool, handler, message)

    expect(await db.prisma.shipment.count({ where: { orderId } })).toBe(0)
    const rows = await outbox(orderId)
    expect(rows.map((row) => row.type)).toEqual([ShipmentFailed.type])
    expect(ShipmentFailed.schema.parse(rows[0]?.payload)).toMatchObject({
      orderId,
      reason: 'unsupported_country',
      country: 'AQ',
      lines: message.payload.lines,
    })
  })

  it('when the same message is delivered twice, then one shipment and one event exist', async () => {
    const message = stockReserved('US')
    const { orderId } = message.payload

    expect(await deliver(db.pool, handler, message)).toBe('handled')
    expect(await deliver(db.pool, handler, message)).toBe('duplicate')

    expect(await db.prisma.shipment.count({ where: { orderId } })).toBe(1)
    expect(await outbox(orderId)).toHaveLength(1)
  })

  it('when the same order arrives again under a new message id, then no second shipment is booked', async () => {
    const message = stockReserved('DE')
    const { orderId } = message.payload
    await deliver(db.pool, handler, message)

    expect(await deliver(db.pool, handler, { ...message, id: randomUUID() })).toBe('handled')

    expect(await db.prisma.shipment.count({ where: { orderId } })).toBe(1)
    expect(await outbox(orderId)).toHaveLength(1)
  })

  it('when CARRIER_ACCOUNT is missing, then the delivery fails naming it, writes nothing, and succeeds once it is supplied', async () => {
    const message = stockReserved('DE')
    const { orderId } = message.payload
    const unconfigured = createShipmentWhenStockReserved({ logger, clock: () => new Date() }, '')

    const failure = deliver(db.pool, unconfigured, message)
    await expect(failure).rejects.toBeInstanceOf(MissingSettingError)
    await expect(failure).rejects.toThrow(/CARRIER_ACCOUNT/)
    expect(await db.prisma.shipment.count({ where: { orderId } })).toBe(0)
    expect(await outbox(orderId)).toHaveLength(0)
    // The inbox row rolled back with the rest, so the retry is not mistaken for a duplicate.
    expect(await db.prisma.inboxMessage.count({ where: { messageId: message.id } })).toBe(0)

    // "Restart" with the setting supplied: the retried delivery goes through.
    const configured = createShipmentWhenStockReserved({ logger, clock: () => new Date() }, 'acct-42')
    expect(await deliver(db.pool, configured, { ...message, attempt: 2 })).toBe('handled')
    expect(await db.prisma.shipment.count({ where: { orderId, carrierAccount: 'acct-42' } })).toBe(1)
    expect((await outbox(orderId)).map((row) => row.type)).toEqual([ShipmentCreated.type])
  })
})
