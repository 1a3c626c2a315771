import { deliver, memoryLogger } from '@saga/messaging/testing'
import { Registry } from '@saga/service-kit'
import { describe, expect, it } from 'vitest'
import { createOrderMetrics, TIME_TO_FINAL_STATE } from '../src/metrics.js'
import { cancelOrderWhenPaymentFailed } from '../src/reactions/cancel-order-when-payment-failed.js'
import { confirmOrderWhenShipmentCreated } from '../src/reactions/confirm-order-when-shipment-created.js'
import { pendingOrder } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { paymentFailed, shipmentCreated } from './support/orders.js'

const db = useServiceTestDatabase(database, 'order_final')
let registry: Registry

/** The two reactions with fresh order metrics registered on a fresh `registry`. */
function reactionsObserved() {
  registry = new Registry()
  const metrics = createOrderMetrics()
  metrics.register(registry)
  const deps = { logger: memoryLogger(), clock: () => new Date(), metrics }
  return { confirm: confirmOrderWhenShipmentCreated(deps), cancel: cancelOrderWhenPaymentFailed(deps) }
}

/** count and sum of the histogram for `status`, from the exposition text. */
async function observed(status: string): Promise<{ count: number; sum: number }> {
  const text = await registry.metrics()
  const value = (suffix: string) =>
    Number(
      new RegExp(`^${TIME_TO_FINAL_STATE}_${suffix}\\{status="${status}"\\} (\\S+)$`, 'm').exec(text)?.[1] ??
        0,
    )
  return { count: value('count'), sum: value('sum') }
}

/** A PENDING order created `ageSeconds` ago (created_at moved back on the database's clock). */
async function orderCreatedAgo(ageSeconds: number): Promise<string> {
  const orderId = await pendingOrder(db)
  await db.pool.query(
    `UPDATE orders SET created_at = now() - make_interval(secs => $2) WHERE id = $1::uuid`,
    [orderId, ageSeconds],
  )
  return orderId
}

describe('saga_order_time_to_final_state_seconds', () => {
  it('when an order 7 s old is confirmed, then one CONFIRMED observation of about 7 s is made, and none on redelivery', async () => {
    const { confirm } = reactionsObserved()
    const orderId = await orderCreatedAgo(7)
    const message = shipmentCreated(orderId)

    expect(await deliver(db.pool, confirm, message)).toBe('handled')
    const first = await observed('CONFIRMED')
    expect(first.count).toBe(1)
    expect(first.sum).toBeGreaterThanOrEqual(7)
    expect(first.sum).toBeLessThan(60)

    expect(await deliver(db.pool, confirm, message)).toBe('duplicate')
    expect(await deliver(db.pool, confirm, shipmentCreated(orderId))).toBe('handled')
    expect(await observed('CONFIRMED')).toEqual(first)
    expect((await observed('CANCELLED')).count).toBe(0)
  })

  it('when an order 3 s old is cancelled, then one CANCELLED observation is made, and none when a cancelled order is not confirmed', async () => {
    const { confirm, cancel } = reactionsObserved()
    const orderId = await orderCreatedAgo(3)

    expect(await deliver(db.pool, cancel, paymentFailed(orderId))).toBe('handled')
    const cancelled = await observed('CANCELLED')
    expect(cancelled.count).toBe(1)
    expect(cancelled.sum).toBeGreaterThanOrEqual(3)
    expect(cancelled.sum).toBeLessThan(60)

    expect(await deliver(db.pool, confirm, shipmentCreated(orderId))).toBe('handled')
    expect((await observed('CONFIRMED')).count).toBe(0)
    expect(await observed('CANCELLED')).toEqual(cancelled)
  })
})
