import { randomUUID } from 'node:crypto'
import { useServiceTimeZones } from '@saga/service-kit/testing'
import { AT, LATER } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { dbPlugin } from '../src/plugins/db.js'

// A non-UTC database zone must not move timestamps (services/order/test/time-zone.int.test.ts says why): the database's zone is
// New York and the process's Kolkata; what the service stores and reads must not move.

describe('shipment timestamps under a New York database and a Kolkata process', () => {
  const zones = useServiceTimeZones('shipment_tz', dbPlugin, loadConfig)

  it('when every timestamp column is written through Prisma, then the same instant is stored and read back', async () => {
    const id = randomUUID()
    await zones().app.prisma.shipment.create({
      data: {
        id,
        orderId: randomUUID(),
        carrier: 'demo',
        carrierAccount: 'demo-carrier',
        trackingNumber: id,
        country: 'DE',
        address: {},
        createdAt: AT,
      },
    })
    const read = await zones().app.prisma.shipment.findUniqueOrThrow({ where: { id } })
    expect(read.createdAt).toEqual(AT)
    expect(await zones().storedMs('shipment', 'created_at', 'id', id)).toBe(AT.getTime())
  })

  it('when a row was written by another client in New York time, then Prisma reads the instant it holds', async () => {
    const id = randomUUID()
    await zones().other.query(
      `INSERT INTO shipment (id, order_id, carrier, carrier_account, tracking_number, country, address, created_at)
       VALUES ($1, $2, 'demo', 'demo-carrier', $3, 'DE', '{}', '2026-11-01 01:30:00.123-04')`,
      [id, randomUUID(), id],
    )
    const read = await zones().app.prisma.shipment.findUniqueOrThrow({ where: { id } })
    expect(read.createdAt).toEqual(LATER)
  })
})
