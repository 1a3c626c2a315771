import { randomUUID } from 'node:crypto'
import { OrderCancelled, PaymentProcessed, StockReserved } from '@saga/contracts'
import { pgDatabase } from '@saga/messaging'
import { memoryLogger } from '@saga/messaging/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { createDeadlineScheduler, type DeadlineScheduler } from '../src/deadlines/scheduler.js'
import { recordTimeline } from '../src/store/timeline.js'
import { pendingOrder } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { emitted } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_deadlines')
const logger = memoryLogger()
const schedulers: DeadlineScheduler[] = []

afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()))
  // Each test starts with no PENDING order with a deadline, so one test's orders never fire in another's.
  await db.pool.query(`UPDATE orders SET deadline_at = NULL WHERE status = 'PENDING'`)
})

const scheduler = (options: { maxSleepMs?: number; retryMs?: number; batchSize?: number } = {}) => {
  const s = createDeadlineScheduler({ database: pgDatabase(db.pool), logger, ...options })
  schedulers.push(s)
  return s
}

const statusOf = async (orderId: string) =>
  (await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status

/** Polls until `check` is true or `ms` passed; returns whether it became true. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const cancelledRows = (orderId: string) => emitted(db, orderId, OrderCancelled)

describe('deadline scheduler', () => {
  it('when a scheduler starts after deadlines passed (a crash), then it fires them at once with the step each was waiting for', async () => {
    const waitingForPayment = await pendingOrder(db, 1)
    const waitingForStock = await pendingOrder(db, 1)
    const waitingForShipment = await pendingOrder(db, 1)
    const seen = async (orderId: string, type: string) =>
      pgDatabase(db.pool).transaction((tx) =>
        recordTimeline(tx, {
          messageId: randomUUID(),
          orderId,
          type,
          source: 'x',
          occurredAt: new Date(),
          data: {},
        }),
      )
    await seen(waitingForStock, PaymentProcessed.type)
    await seen(waitingForShipment, PaymentProcessed.type)
    await seen(waitingForShipment, StockReserved.type)
    await new Promise((resolve) => setTimeout(resolve, 20))

    const s = scheduler({ maxSleepMs: 60_000 })
    s.start()

    expect(await eventually(async () => (await statusOf(waitingForShipment)) === 'CANCELLED', 15_000)).toBe(
      true,
    )
    for (const [orderId, step] of [
      [waitingForPayment, 'payment'],
      [waitingForStock, 'stock'],
      [waitingForShipment, 'shipment'],
    ] as const) {
      const order = await db.prisma.order.findUniqueOrThrow({
        where: { id: orderId },
        include: { events: true },
      })
      expect(order).toMatchObject({
        status: 'CANCELLED',
        cancellationReason: 'deadline_exceeded',
        failedStep: step,
      })
      const rows = await cancelledRows(orderId)
      expect(rows).toHaveLength(1)
      expect(OrderCancelled.schema.parse(rows[0]?.payload)).toMatchObject({
        reason: 'deadline_exceeded',
        failedStep: step,
        cancelledAt: order.cancelledAt?.toISOString(),
      })
      expect(order.events.find((e) => e.type === OrderCancelled.type)?.note).toBe(
        `cancelled by its deadline while waiting for ${step}`,
      )
    }
    expect(s.stats().fired).toBe(3)
  })

  it('when two schedulers claim the same due deadlines at once, then each order is cancelled once', async () => {
    const orders = await Promise.all(Array.from({ length: 40 }, () => pendingOrder(db, 1)))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const a = scheduler({ batchSize: 7, maxSleepMs: 60_000 })
    const b = scheduler({ batchSize: 7, maxSleepMs: 60_000 })

    a.start()
    b.start()

    const done = async () =>
      (await db.prisma.order.count({ where: { id: { in: orders }, status: 'CANCELLED' } })) === orders.length
    expect(await eventually(done, 30_000)).toBe(true)
    const { rows } = await db.pool.query<{ aggregate_id: string; n: string }>(
      `SELECT aggregate_id, count(*) AS n FROM outbox_message WHERE type = $1 AND aggregate_id = ANY($2::text[])
       GROUP BY aggregate_id`,
      [OrderCancelled.type, orders],
    )
    expect(rows).toHaveLength(orders.length)
    expect(rows.every((row) => row.n === '1')).toBe(true)
    expect(a.stats().fired + b.stats().fired).toBe(orders.length)
  })

  it('when a new order is due soon, then the scheduler sleeps until its deadline instead of polling, and fires it then', async () => {
    const s = scheduler({ maxSleepMs: 60_000 })
    s.start()
    expect(await eventually(() => s.stats().claims === 1, 10_000)).toBe(true)

    const deadlineMs = 1_500
    const created = Date.now()
    const orderId = await pendingOrder(db, deadlineMs)
    s.noteDeadline(deadlineMs)

    expect(await eventually(async () => (await statusOf(orderId)) === 'CANCELLED', 15_000)).toBe(true)
    const order = await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })
    expect(order.cancelledAt!.getTime()).toBeGreaterThanOrEqual(order.deadlineAt!.getTime())
    expect(Date.now() - created).toBeGreaterThanOrEqual(deadlineMs - 50)
    // One claim at start, one at the deadline, at most a couple more for a timer that fired a
    // millisecond early on a loaded machine; a poller at even 100 ms would have made 15.
    expect(s.stats().claims).toBeLessThanOrEqual(4)
    expect(s.stats().fired).toBe(1)
  })

  it('when another instance created the order (no wake-up here), then the sleep cap still fires it', async () => {
    const s = scheduler({ maxSleepMs: 1_000 })
    s.start()
    expect(await eventually(() => s.stats().claims === 1, 10_000)).toBe(true)

    const orderId = await pendingOrder(db, 300)

    expect(await eventually(async () => (await statusOf(orderId)) === 'CANCELLED', 15_000)).toBe(true)
    expect(s.stats().fired).toBe(1)
  })

  it('when no order is pending, then the scheduler does not claim again before its cap', async () => {
    const s = scheduler({ maxSleepMs: 60_000 })
    s.start()
    expect(await eventually(() => s.stats().claims === 1, 10_000)).toBe(true)

    await new Promise((resolve) => setTimeout(resolve, 1_500))

    expect(s.stats().claims).toBe(1)
  })
})
