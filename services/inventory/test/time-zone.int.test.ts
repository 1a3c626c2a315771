import { randomUUID } from 'node:crypto'
import { useServiceTimeZones } from '@saga/service-kit/testing'
import { AT, LATER } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { dbPlugin } from '../src/plugins/db.js'

// A non-UTC database zone must not move timestamps (services/order/test/time-zone.int.test.ts says why): the database's zone is
// New York and the process's Kolkata; what the service stores and reads must not move.

describe('inventory timestamps under a New York database and a Kolkata process', () => {
  const zones = useServiceTimeZones('inventory_tz', dbPlugin, loadConfig)

  it('when every timestamp column is written through Prisma, then the same instant is stored and read back', async () => {
    const sku = `SKU-${randomUUID()}`
    const orderId = randomUUID()
    await zones().app.prisma.stock.create({ data: { sku, available: 5, reserved: 1, updatedAt: AT } })
    await zones().app.prisma.reservation.create({
      data: { orderId, lineNo: 1, sku, quantity: 1, status: 'RELEASED', reservedAt: AT, releasedAt: LATER },
    })
    const read = await zones().app.prisma.stock.findUniqueOrThrow({
      where: { sku },
      include: { reservations: true },
    })
    expect([read.updatedAt, read.reservations[0]?.reservedAt, read.reservations[0]?.releasedAt]).toEqual([
      AT,
      AT,
      LATER,
    ])
    expect(await zones().storedMs('stock', 'updated_at', 'sku', sku)).toBe(AT.getTime())
    expect(await zones().storedMs('reservation', 'released_at', 'order_id', orderId)).toBe(LATER.getTime())
  })

  it('when a row was written by another client in New York time, then Prisma reads the instant it holds', async () => {
    const sku = `SKU-${randomUUID()}`
    await zones().other.query(
      `INSERT INTO stock (sku, available, updated_at) VALUES ($1, 1, '2026-11-01 01:30:00.123-04')`,
      [sku],
    )
    const read = await zones().app.prisma.stock.findUniqueOrThrow({ where: { sku } })
    expect(read.updatedAt).toEqual(LATER)
  })
})
