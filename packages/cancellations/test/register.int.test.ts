import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { OrderCancelled } from '@saga/contracts'
import { consumed, memoryLogger } from '@saga/messaging/testing'
import { createTestDatabase, type TestDatabase } from '@saga/testkit'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cancellationRegister, ORDER_IS_CANCELLED_SQL, undoWhenOrderCancelled } from '../src/register.js'

// The register payment, inventory and shipment share (their cancellation tests cover it in each
// service); here its own promises: idempotent record, the check, and the per-order lock.
let db: TestDatabase
let pool: pg.Pool
const register = cancellationRegister('kit')

beforeAll(async () => {
  // The package's own table SQL, which each service's migration copies.
  db = await createTestDatabase({
    prefix: 'cancel',
    sqlFiles: [fileURLToPath(new URL('../sql/cancelled-order.sql', import.meta.url))],
  })
  pool = db.pool
})

afterAll(async () => {
  await db?.drop()
})

/** Runs `fn` in BEGIN ... COMMIT on a client of its own (ROLLBACK when it throws). */
async function inTransaction<T>(fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const tx = await pool.connect()
  try {
    await tx.query('BEGIN')
    const result = await fn(tx)
    await tx.query('COMMIT')
    return result
  } catch (error) {
    await tx.query('ROLLBACK')
    throw error
  } finally {
    tx.release()
  }
}

/** Resolves once a session of this database waits for an advisory lock (10 s at most). */
async function waitingOnAdvisoryLock(): Promise<void> {
  const deadline = Date.now() + 10_000
  for (;;) {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`,
    )
    if (rows[0]?.n === 1) return
    if (Date.now() > deadline) throw new Error('no session waits for an advisory lock')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const cancelledMessage = (orderId: string) =>
  consumed(
    OrderCancelled,
    {
      orderId,
      customerId: randomUUID(),
      reason: 'deadline_exceeded',
      cancelledAt: '2026-11-30T16:00:00.000Z',
    },
    { correlationId: orderId, source: 'order' },
  )

describe('cancellation register', () => {
  it('when a cancellation is saved twice, then the first stores it, the second stores nothing, and both the check and the folded expression see it', async () => {
    const orderId = randomUUID()
    const cancellation = {
      orderId,
      reason: 'customer_requested',
      cancelledAt: new Date('2026-11-30T12:00:00Z'),
    }
    expect(await inTransaction((tx) => register.isCancelled(tx, orderId))).toBe(false)

    expect(await inTransaction((tx) => register.saveCancellation(tx, cancellation))).toBe(true)
    expect(
      await inTransaction((tx) => register.saveCancellation(tx, { ...cancellation, reason: 'other' })),
    ).toBe(false)

    expect(await inTransaction((tx) => register.isCancelled(tx, orderId))).toBe(true)
    const { rows } = await pool.query<{ reason: string; cancelled_at: Date; cancelled: boolean }>(
      `SELECT reason, cancelled_at, ${ORDER_IS_CANCELLED_SQL} AS cancelled FROM cancelled_order WHERE order_id = $1`,
      [orderId],
    )
    expect(rows).toEqual([
      { reason: 'customer_requested', cancelled_at: cancellation.cancelledAt, cancelled: true },
    ])
  })

  it("when one transaction holds an order's lock, then another waits for it until COMMIT, and a lock on another order does not", async () => {
    const orderId = randomUUID()
    const holder = await pool.connect()
    try {
      await holder.query('BEGIN')
      await register.takeOrderLock(holder, orderId)
      const events: string[] = []
      const waiter = inTransaction(async (tx) => {
        await register.takeOrderLock(tx, orderId)
        events.push('waiter locked')
        return register.isCancelled(tx, orderId)
      })
      await waitingOnAdvisoryLock()
      await inTransaction((tx) => register.takeOrderLock(tx, randomUUID()))
      events.push('other order locked')
      await register.saveCancellation(holder, {
        orderId,
        reason: 'payment_declined',
        cancelledAt: new Date(),
      })
      await holder.query('COMMIT')
      // The waiter's next statement after the lock reads what the holder committed.
      expect(await waiter).toBe(true)
      expect(events).toEqual(['other order locked', 'waiter locked'])
    } finally {
      holder.release()
    }
  })

  it('when OrderCancelled is handled twice under two message ids, then it is recorded once, the undo runs both times, and the second is logged as already recorded', async () => {
    const orderId = randomUUID()
    const logger = memoryLogger()
    const undone: string[] = []
    const handler = undoWhenOrderCancelled<pg.PoolClient>(
      'undo-when-order-cancelled',
      register,
      { logger, clock: () => new Date() },
      async (tx, message) => {
        // The undo runs after the record, in the same transaction.
        expect(await register.isCancelled(tx, message.payload.orderId)).toBe(true)
        undone.push(message.id)
      },
    )
    expect(handler.name).toBe('undo-when-order-cancelled')
    expect(handler.message).toBe(OrderCancelled)
    const first = cancelledMessage(orderId)
    const second = cancelledMessage(orderId)

    await inTransaction((tx) => handler.handle(first, tx))
    await inTransaction((tx) => handler.handle(second, tx))

    expect(undone).toEqual([first.id, second.id])
    const { rows } = await pool.query('SELECT reason FROM cancelled_order WHERE order_id = $1', [orderId])
    expect(rows).toEqual([{ reason: 'deadline_exceeded' }])
    expect(logger.lines.filter((l) => l.msg === 'order cancellation already recorded')).toEqual([
      {
        level: 'info',
        obj: { orderId, messageId: second.id, correlationId: orderId },
        msg: 'order cancellation already recorded',
      },
    ])
  })
})
