import { randomUUID } from 'node:crypto'
import { useServiceTimeZones } from '@saga/service-kit/testing'
import { AT, LATER } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { dbPlugin } from '../src/plugins/db.js'

// In a non-UTC session zone @prisma/adapter-pg shifts what Prisma stores and reads, so every
// connection runs in UTC. Both clocks are moved here: the database's (New York) and the process's
// (Kolkata, +05:30).

function orderData(id: string) {
  return {
    id,
    customerId: randomUUID(),
    currency: 'EUR',
    totalAmount: 2500n,
    paymentMethod: 'tok_visa',
    shipName: 'Ada',
    shipLine1: '1 Street',
    shipCity: 'London',
    shipPostalCode: 'N1',
    shipCountry: 'GB',
  }
}

describe('timestamps under a New York database and a Kolkata process', () => {
  const zones = useServiceTimeZones('order_tz', dbPlugin, loadConfig)

  it('when the service connects, then its sessions run in UTC with the documented limits', async () => {
    const { rows } = await zones().app.pool.query<Record<string, string>>(
      `SELECT current_setting('TimeZone') AS zone, current_setting('statement_timeout') AS statement,
              current_setting('lock_timeout') AS lock,
              current_setting('idle_in_transaction_session_timeout') AS idle`,
    )
    expect(rows[0]).toEqual({ zone: 'UTC', statement: '5s', lock: '2s', idle: '15s' })
  })

  it('when every timestamp column of the order tables is written through Prisma, then the same instant is stored and read back', async () => {
    const id = randomUUID()
    const messageId = randomUUID()
    await zones().app.prisma.order.create({
      data: {
        ...orderData(id),
        status: 'CANCELLED',
        cancellationReason: 'test',
        createdAt: AT,
        updatedAt: LATER,
        cancelledAt: LATER,
        events: {
          create: { messageId, type: 't', source: 'order', occurredAt: AT, recordedAt: LATER, data: {} },
        },
        idempotencyKeys: {
          create: {
            key: id,
            requestHash: 'a'.repeat(64),
            responseStatus: 201,
            responseBody: {},
            createdAt: AT,
          },
        },
      },
    })
    const read = await zones().app.prisma.order.findUniqueOrThrow({
      where: { id },
      include: { events: true, idempotencyKeys: true },
    })
    expect([read.createdAt, read.updatedAt, read.cancelledAt]).toEqual([AT, LATER, LATER])
    expect([read.events[0]?.occurredAt, read.events[0]?.recordedAt]).toEqual([AT, LATER])
    expect(read.idempotencyKeys[0]?.createdAt).toEqual(AT)
    expect(await zones().storedMs('orders', 'created_at', 'id', id)).toBe(AT.getTime())
    expect(await zones().storedMs('orders', 'cancelled_at', 'id', id)).toBe(LATER.getTime())
    expect(await zones().storedMs('order_events', 'occurred_at', 'message_id', messageId)).toBe(AT.getTime())
    expect(await zones().storedMs('idempotency_keys', 'created_at', 'key', id)).toBe(AT.getTime())

    const confirmed = await zones().app.prisma.order.update({
      where: { id },
      data: { status: 'CONFIRMED', cancellationReason: null, cancelledAt: null, confirmedAt: AT },
    })
    expect(confirmed.confirmedAt).toEqual(AT)
    expect(await zones().storedMs('orders', 'confirmed_at', 'id', id)).toBe(AT.getTime())
  })

  it('when Prisma raw SQL binds a Date and database defaults fill the rest, then the instants are right', async () => {
    const id = randomUUID()
    const before = Date.now()
    const created = await zones().app.prisma.order.create({ data: orderData(id) })
    // A shift would be hours; the tolerance only absorbs this machine's load.
    expect(Math.abs(created.createdAt.getTime() - before)).toBeLessThan(60_000)
    expect(Math.abs((await zones().storedMs('orders', 'created_at', 'id', id)) - before)).toBeLessThan(60_000)

    const messageId = randomUUID()
    await zones().app.prisma.$executeRaw`
      INSERT INTO order_events (message_id, order_id, type, source, occurred_at, data)
      VALUES (${messageId}::uuid, ${id}::uuid, 't', 'test', ${AT}, '{}'::jsonb)`
    expect(await zones().storedMs('order_events', 'occurred_at', 'message_id', messageId)).toBe(AT.getTime())
    const [row] = await zones().app.prisma.$queryRaw<{ occurred_at: Date }[]>`
      SELECT occurred_at FROM order_events WHERE message_id = ${messageId}::uuid`
    expect(row?.occurred_at).toEqual(AT)
  })

  it('when rows were written by another client in New York time, then Prisma reads the instant they hold', async () => {
    const id = randomUUID()
    const o = orderData(id)
    await zones().other.query(
      `INSERT INTO orders (id, customer_id, currency, total_amount, payment_method, ship_name, ship_line1,
                           ship_city, ship_postal_code, ship_country, created_at, updated_at)
       VALUES ($1, $2, 'EUR', 2500, 'tok_visa', 'Ada', '1 Street', 'London', 'N1', 'GB', $3, '2026-11-01 01:30:00.123-04')`,
      [id, o.customerId, AT],
    )
    const read = await zones().app.prisma.order.findUniqueOrThrow({ where: { id } })
    expect(read.createdAt).toEqual(AT)
    expect(read.updatedAt).toEqual(LATER)
  })
})
