import { randomUUID } from 'node:crypto'
import { StockReservationFailed, StockReserved } from '@saga/contracts'
import { beforeEach, describe, expect, it } from 'vitest'
import { reserveStockWhenPaymentProcessed } from '../src/reactions/reserve-stock-when-payment-processed.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { paymentProcessed as paymentProcessedOf } from './support/events.js'
import { deliver, memoryLogger } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'inventory')
const handler = reserveStockWhenPaymentProcessed({ logger: memoryLogger(), clock: () => new Date() })

beforeEach(async () => {
  await db.pool.query('TRUNCATE reservation, stock, outbox_message, inbox_message')
})

/** A unique sku per test, so assertions never see another test's rows. */
const sku = (name: string) => `${name}-${randomUUID().slice(0, 8)}`

const paymentProcessed = (lines: { sku: string; quantity: number; unitPrice?: number }[]) =>
  paymentProcessedOf(lines.map((line) => ({ unitPrice: 500, ...line })))

/** A PaymentProcessed delivery, as `paymentProcessed` makes it. */
type Delivery = ReturnType<typeof paymentProcessed>

async function setStock(entries: Record<string, number>) {
  for (const [name, available] of Object.entries(entries)) {
    await db.pool.query('INSERT INTO stock (sku, available) VALUES ($1, $2)', [name, available])
  }
}

/** A mug (5 in stock) and a cap (1 in stock) under fresh skus, and the PaymentProcessed of an order of `quantities` of them. */
async function mugAndCapOrder(quantities: { mug: number; cap: number }) {
  const [mug, cap] = [sku('MUG'), sku('CAP')]
  await setStock({ [mug]: 5, [cap]: 1 })
  const message = paymentProcessed([
    { sku: mug, quantity: quantities.mug },
    { sku: cap, quantity: quantities.cap },
  ])
  return { mug, cap, message }
}

async function stockOf(name: string) {
  const { rows } = await db.pool.query<{ available: number; reserved: number }>(
    'SELECT available, reserved FROM stock WHERE sku = $1',
    [name],
  )
  return rows[0]
}

async function outbox(orderId: string) {
  const { rows } = await db.pool.query<{
    type: string
    routing_key: string
    payload: Record<string, unknown>
    headers: Record<string, unknown>
  }>(
    'SELECT type, routing_key, payload, headers FROM outbox_message WHERE aggregate_id = $1 ORDER BY occurred_at',
    [orderId],
  )
  return rows
}

describe('reserve-stock-when-payment-processed', () => {
  it('when every line is in stock, then all are reserved and exactly one StockReserved is in the outbox', async () => {
    const { mug, cap, message } = await mugAndCapOrder({ mug: 2, cap: 1 })

    expect(await deliver(db.pool, handler, message)).toBe('handled')

    expect(await stockOf(mug)).toEqual({ available: 3, reserved: 2 })
    expect(await stockOf(cap)).toEqual({ available: 0, reserved: 1 })
    const reservations = await db.prisma.reservation.findMany({ where: { orderId: message.payload.orderId } })
    expect(reservations.map((r) => [r.lineNo, r.sku, r.quantity, r.status]).sort()).toEqual([
      [0, mug, 2, 'RESERVED'],
      [1, cap, 1, 'RESERVED'],
    ])
    const rows = await outbox(message.payload.orderId)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ type: StockReserved.type, routing_key: StockReserved.routingKey })
    // The saga's correlation id carries on; the payment message is the cause.
    expect(rows[0]?.headers).toMatchObject({ correlationId: message.correlationId, causationId: message.id })
    const payload = StockReserved.schema.parse(rows[0]?.payload)
    expect(payload).toMatchObject({
      orderId: message.payload.orderId,
      customerId: message.payload.customerId,
      lines: message.payload.lines,
      shippingAddress: message.payload.shippingAddress,
    })
  })

  it('when one line is short, then nothing is reserved and StockReservationFailed names the short line', async () => {
    const { mug, cap, message } = await mugAndCapOrder({ mug: 2, cap: 2 })

    await deliver(db.pool, handler, message)

    expect(await stockOf(mug)).toEqual({ available: 5, reserved: 0 })
    expect(await stockOf(cap)).toEqual({ available: 1, reserved: 0 })
    expect(await db.prisma.reservation.count({ where: { orderId: message.payload.orderId } })).toBe(0)
    const rows = await outbox(message.payload.orderId)
    expect(rows.map((row) => row.type)).toEqual([StockReservationFailed.type])
    expect(StockReservationFailed.schema.parse(rows[0]?.payload)).toMatchObject({
      orderId: message.payload.orderId,
      reason: 'out_of_stock',
      unavailable: [{ sku: cap, requested: 2, available: 1 }],
    })
  })

  it('when a sku is unknown, then nothing is reserved and the reason is unknown_sku', async () => {
    const mug = sku('MUG')
    await setStock({ [mug]: 5 })
    const ghost = sku('GHOST')
    const message = paymentProcessed([
      { sku: mug, quantity: 1 },
      { sku: ghost, quantity: 1 },
    ])

    await deliver(db.pool, handler, message)

    expect(await stockOf(mug)).toEqual({ available: 5, reserved: 0 })
    const rows = await outbox(message.payload.orderId)
    expect(StockReservationFailed.schema.parse(rows[0]?.payload)).toMatchObject({
      reason: 'unknown_sku',
      unavailable: [{ sku: ghost, requested: 1, available: 0 }],
    })
  })

  it.each([
    {
      title:
        'when the same message is delivered twice, then the stock is reserved once and one event is emitted',
      again: (first: Delivery) => first,
      outcome: 'duplicate',
    },
    {
      title:
        'when the same order arrives again under a new message id, then nothing more is reserved or emitted',
      again: (first: Delivery) => ({ ...first, id: randomUUID() }),
      outcome: 'handled',
    },
  ])('$title', async ({ again, outcome }) => {
    const mug = sku('MUG')
    await setStock({ [mug]: 5 })
    const first = paymentProcessed([{ sku: mug, quantity: 2 }])

    expect(await deliver(db.pool, handler, first)).toBe('handled')
    expect(await deliver(db.pool, handler, again(first))).toBe(outcome)

    expect(await stockOf(mug)).toEqual({ available: 3, reserved: 2 })
    expect(await outbox(first.payload.orderId)).toHaveLength(1)
  })

  it('when the stock would go negative by a direct write, then the CHECK constraint refuses it', async () => {
    const mug = sku('MUG')
    await setStock({ [mug]: 1 })
    await expect(
      db.pool.query('UPDATE stock SET available = available - 2 WHERE sku = $1', [mug]),
    ).rejects.toThrow(/stock_available_non_negative/)
  })
})
