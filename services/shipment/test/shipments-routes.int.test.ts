import { randomUUID } from 'node:crypto'
import { useRouteApp, useServiceTestDatabase } from '@saga/service-kit/testing'
import { describe, expect, it } from 'vitest'
import { shipmentRoutes } from '../src/routes/shipments.js'
import { database } from '../src/plugins/db.js'

const db = useServiceTestDatabase(database, 'shipment')
const app = useRouteApp('shipment', (app) => app.register(shipmentRoutes, { db: db.prisma }))

/** A shipment of `orderId` booked with saga-parcel to Berlin (a fresh id and tracking number), with `more` on top. */
const bookShipment = (
  orderId: string,
  more: { status?: 'CANCELLED'; cancelledAt?: Date; cancelReason?: string } = {},
) =>
  db.prisma.shipment.create({
    data: {
      id: randomUUID(),
      orderId,
      carrier: 'saga-parcel',
      carrierAccount: 'demo-carrier',
      trackingNumber: `SP${randomUUID().slice(0, 12).toUpperCase()}`,
      country: 'DE',
      address: { name: 'Ada', line1: 'Main St 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
      ...more,
    },
  })

describe('GET /shipments?orderId= with a UUID in any case', () => {
  it.each(['FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF', '00000000-0000-0000-0000-000000000000'])(
    'when orderId is %s, then 200 with an empty list',
    async (orderId) => {
      const res = await app.inject({ method: 'GET', url: `/shipments?orderId=${orderId}` })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual({ items: [] })
    },
  )
})

describe('GET /shipments?orderId=', () => {
  it('when the order has a shipment, then it is listed with carrier and tracking number', async () => {
    const orderId = randomUUID()
    const shipment = await bookShipment(orderId)

    const res = await app.inject({ method: 'GET', url: `/shipments?orderId=${orderId}` })
    // The same order asked for in upper case: PostgreSQL reads a UUID in either case.
    const upper = await app.inject({ method: 'GET', url: `/shipments?orderId=${orderId.toUpperCase()}` })
    expect(upper.json()).toEqual(res.json())

    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      items: [
        {
          id: shipment.id,
          orderId,
          status: 'CREATED',
          carrier: 'saga-parcel',
          trackingNumber: shipment.trackingNumber,
          country: 'DE',
          createdAt: shipment.createdAt.toISOString(),
          cancelledAt: null,
          cancelReason: null,
        },
      ],
    })
  })

  it('when the order was cancelled after its shipment was booked, then the shipment is listed CANCELLED with when and why', async () => {
    const orderId = randomUUID()
    const cancelledAt = new Date('2026-11-30T12:00:00.000Z')
    await bookShipment(orderId, { status: 'CANCELLED', cancelledAt, cancelReason: 'customer_requested' })

    const res = await app.inject({ method: 'GET', url: `/shipments?orderId=${orderId}` })

    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({
      items: [
        { status: 'CANCELLED', cancelledAt: cancelledAt.toISOString(), cancelReason: 'customer_requested' },
      ],
    })
  })

  it('when the order has no shipment, then the list is empty', async () => {
    const res = await app.inject({ method: 'GET', url: `/shipments?orderId=${randomUUID()}` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ items: [] })
  })

  const bad: [string, string, string][] = [
    ['a non-uuid order id', '/shipments?orderId=42', 'querystring.orderId'],
    ['no order id', '/shipments', 'querystring.orderId'],
    ['an unknown parameter', `/shipments?orderId=${randomUUID()}&limit=5`, 'querystring.limit'],
  ]
  it.each(bad)('when the query has %s, then 400 names %s', async (_, url, path) => {
    const res = await app.inject({ method: 'GET', url })
    expect(res.statusCode).toBe(400)
    const body = res.json<{ error: string; details: { path: string; issue: string }[] }>()
    expect(body.error).toBe('Bad Request')
    expect(body.details.map((d) => d.path)).toContain(path)
  })
})
