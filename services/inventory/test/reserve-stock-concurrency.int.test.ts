import { randomUUID } from 'node:crypto'
import { StockReservationFailed, StockReserved } from '@saga/contracts'
import { describe, expect, it } from 'vitest'
import { reserveStockWhenPaymentProcessed } from '../src/reactions/reserve-stock-when-payment-processed.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { paymentProcessed } from './support/events.js'
import { deliver, memoryLogger } from '@saga/messaging/testing'

const db = useServiceTestDatabase(database, 'inventory')
const handler = reserveStockWhenPaymentProcessed({ logger: memoryLogger(), clock: () => new Date() })

const order = (lines: { sku: string; quantity: number }[]) =>
  paymentProcessed(lines.map((line) => ({ ...line, unitPrice: 100 })))

async function countEvents(type: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM outbox_message WHERE type = $1',
    [type],
  )
  return rows[0]?.n ?? 0
}

describe('reserve-stock-when-payment-processed under concurrency', () => {
  it('when 16 orders race for the last 5 units, then exactly 5 succeed and the stock ends at 0 available, 5 reserved', async () => {
    const sku = `LAST-${randomUUID().slice(0, 8)}`
    await db.pool.query('INSERT INTO stock (sku, available) VALUES ($1, 5)', [sku])
    const orders = Array.from({ length: 16 }, () => order([{ sku, quantity: 1 }]))

    const results = await Promise.allSettled(orders.map((message) => deliver(db.pool, handler, message)))

    expect(results.filter((r) => r.status === 'rejected')).toEqual([])
    const { rows } = await db.pool.query('SELECT available, reserved FROM stock WHERE sku = $1', [sku])
    expect(rows[0]).toEqual({ available: 0, reserved: 5 })
    const held = await db.pool.query<{ n: number }>(
      'SELECT coalesce(sum(quantity), 0)::int AS n FROM reservation WHERE sku = $1',
      [sku],
    )
    expect(held.rows[0]?.n).toBe(5)
    expect(await countEvents(StockReserved.type)).toBe(5)
    expect(await countEvents(StockReservationFailed.type)).toBe(11)
  })

  it('when orders take two skus in opposite line order at once, then none deadlocks and the units add up', async () => {
    const [a, b] = [`A-${randomUUID().slice(0, 8)}`, `B-${randomUUID().slice(0, 8)}`]
    await db.pool.query('INSERT INTO stock (sku, available) VALUES ($1, 6), ($2, 6)', [a, b])
    await db.pool.query('TRUNCATE outbox_message')
    const orders = Array.from({ length: 12 }, (_, i) =>
      order(
        i % 2 === 0
          ? [
              { sku: a, quantity: 1 },
              { sku: b, quantity: 1 },
            ]
          : [
              { sku: b, quantity: 1 },
              { sku: a, quantity: 1 },
            ],
      ),
    )

    const results = await Promise.allSettled(orders.map((message) => deliver(db.pool, handler, message)))

    // A deadlock would surface as a rejected transaction (PostgreSQL aborts one of the pair).
    expect(results.filter((r) => r.status === 'rejected')).toEqual([])
    const { rows } = await db.pool.query(
      'SELECT sku, available, reserved FROM stock WHERE sku = ANY($1) ORDER BY sku',
      [[a, b]],
    )
    expect(rows).toEqual([
      { sku: a, available: 0, reserved: 6 },
      { sku: b, available: 0, reserved: 6 },
    ])
    expect(await countEvents(StockReserved.type)).toBe(6)
    expect(await countEvents(StockReservationFailed.type)).toBe(6)
  })
})
