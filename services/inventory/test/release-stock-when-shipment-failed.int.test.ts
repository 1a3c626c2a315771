import { randomUUID } from 'node:crypto'
import { ShipmentFailed, StockReleased } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { releaseStockWhenShipmentFailed } from '../src/reactions/release-stock-when-shipment-failed.js'
import { reserveStockWhenPaymentProcessed } from '../src/reactions/reserve-stock-when-payment-processed.js'
import { shipmentFailed, useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { MCMURDO, stockedOrder } from './support/events.js'
import { consumed, deliver, memoryLogger } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'inventory')
const logger = memoryLogger()
const reserve = reserveStockWhenPaymentProcessed({ logger, clock: () => new Date() })
const release = releaseStockWhenShipmentFailed({ logger, clock: () => new Date() })

/** A sku with `available` units and an order holding `quantity` of them, reserved through the reaction. */
async function reservedOrder(available: number, quantity: number) {
  const item = { skuPrefix: 'REL', available, quantity, unitPrice: 250 }
  const { sku, orderId, lines, paid } = await stockedOrder(db.pool, item, MCMURDO)
  await deliver(db.pool, reserve, paid)
  return { sku, orderId, failed: shipmentFailed(orderId, lines) }
}

const stockOf = async (sku: string) =>
  (await db.pool.query('SELECT available, reserved FROM stock WHERE sku = $1', [sku])).rows[0] as unknown

const released = async (orderId: string) =>
  (
    await db.pool.query<{ payload: unknown }>(
      'SELECT payload FROM outbox_message WHERE aggregate_id = $1 AND type = $2',
      [orderId, StockReleased.type],
    )
  ).rows

describe('release-stock-when-shipment-failed', () => {
  it('when the shipment failed, then the reservation goes back to available and one StockReleased is emitted', async () => {
    const { sku, orderId, failed } = await reservedOrder(5, 3)
    expect(await stockOf(sku)).toEqual({ available: 2, reserved: 3 })

    expect(await deliver(db.pool, release, failed)).toBe('handled')

    expect(await stockOf(sku)).toEqual({ available: 5, reserved: 0 })
    const rows = await db.prisma.reservation.findMany({ where: { orderId } })
    expect(rows.map((r) => r.status)).toEqual(['RELEASED'])
    expect(rows[0]?.releasedAt).toBeInstanceOf(Date)
    const events = await released(orderId)
    expect(events).toHaveLength(1)
    expect(StockReleased.schema.parse(events[0]?.payload)).toMatchObject({
      orderId,
      reason: 'unsupported_country',
      lines: failed.payload.lines,
    })
  })

  it('when the same ShipmentFailed is delivered twice, then the stock is released once', async () => {
    const { sku, orderId, failed } = await reservedOrder(4, 4)

    expect(await deliver(db.pool, release, failed)).toBe('handled')
    expect(await deliver(db.pool, release, failed)).toBe('duplicate')

    expect(await stockOf(sku)).toEqual({ available: 4, reserved: 0 })
    expect(await released(orderId)).toHaveLength(1)
  })

  it('when a second ShipmentFailed for the order arrives under a new id, then nothing more is released', async () => {
    const { sku, orderId, failed } = await reservedOrder(4, 1)
    await deliver(db.pool, release, failed)

    expect(await deliver(db.pool, release, { ...failed, id: randomUUID() })).toBe('handled')

    expect(await stockOf(sku)).toEqual({ available: 4, reserved: 0 })
    expect(await released(orderId)).toHaveLength(1)
  })

  it('when the order holds no reservation (never reserved, or released on its cancel already), then nothing changes, nothing is emitted and it is logged', async () => {
    const orderId = randomUUID()
    const failed = consumed(
      ShipmentFailed,
      {
        orderId,
        reason: 'unsupported_country',
        lines: [{ sku: 'NEVER-RESERVED', quantity: 1, unitPrice: 1 }],
        failedAt: new Date().toISOString(),
      },
      orderId,
    )

    await deliver(db.pool, release, failed)

    expect(await released(orderId)).toHaveLength(0)
    expect(
      logger.lines.some((line) => line.level === 'info' && JSON.stringify(line.obj).includes(orderId)),
    ).toBe(true)
  })
})
