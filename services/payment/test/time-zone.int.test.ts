import { randomUUID } from 'node:crypto'
import { useServiceTimeZones } from '@saga/service-kit/testing'
import { AT, LATER } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { dbPlugin } from '../src/plugins/db.js'

// A non-UTC database zone must not move timestamps (services/order/test/time-zone.int.test.ts says why): the database's zone is
// New York and the process's Kolkata; what the service stores and reads must not move.

describe('payment timestamps under a New York database and a Kolkata process', () => {
  const zones = useServiceTimeZones('payment_tz', dbPlugin, loadConfig)

  it('when every timestamp column is written through Prisma, then the same instant is stored and read back', async () => {
    const paymentId = randomUUID()
    const orderId = randomUUID()
    const payment = {
      orderId,
      customerId: randomUUID(),
      amount: 2500n,
      currency: 'EUR',
      paymentMethod: 'tok_visa',
    }
    await zones().app.prisma.payment.create({
      data: {
        id: paymentId,
        ...payment,
        status: 'CAPTURED',
        createdAt: AT,
        refund: {
          create: { id: paymentId, orderId, amount: 2500n, currency: 'EUR', reason: 'r', createdAt: LATER },
        },
      },
    })
    const read = await zones().app.prisma.payment.findUniqueOrThrow({
      where: { id: paymentId },
      include: { refund: true },
    })
    expect([read.createdAt, read.refund?.createdAt]).toEqual([AT, LATER])
    expect(await zones().storedMs('payments', 'created_at', 'id', paymentId)).toBe(AT.getTime())
    expect(await zones().storedMs('refunds', 'created_at', 'id', paymentId)).toBe(LATER.getTime())
  })

  it('when a row was written by another client in New York time, then Prisma reads the instant it holds', async () => {
    const id = randomUUID()
    await zones().other.query(
      `INSERT INTO payments (id, order_id, customer_id, status, amount, currency, payment_method, created_at)
       VALUES ($1, $2, $3, 'CAPTURED', 2500, 'EUR', 'tok_visa', '2026-11-01 01:30:00.123-04')`,
      [id, randomUUID(), randomUUID()],
    )
    const read = await zones().app.prisma.payment.findUniqueOrThrow({ where: { id } })
    expect(read.createdAt).toEqual(LATER)
  })
})
