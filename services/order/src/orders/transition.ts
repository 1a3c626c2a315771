import { decide, type OrderCommand, type OrderStatus, type Transition } from '../domain/order.js'
import type { Tx } from './types.js'

/** The facts of a locked order the reactions announce. */
export interface LockedOrder {
  id: string
  customerId: string
  status: OrderStatus
  currency: string
  totalAmount: number
}

/**
 * Locks the order row, decides `command` with the pure rules and writes the change. A concurrent
 * reaction for the same order waits for the lock and then sees the new status. `FOR NO KEY UPDATE`
 * (what an UPDATE of non-key columns takes anyway) rather than `FOR UPDATE`: it does not conflict
 * with the key-share locks that timeline inserts take through their foreign key, so recording an
 * event never waits for, or deadlocks with, a status change.
 * Returns undefined when the order is unknown here.
 */
export async function transitionOrder(
  tx: Tx,
  orderId: string,
  command: OrderCommand,
  now: Date,
): Promise<{ order: LockedOrder; transition: Transition } | undefined> {
  const [row] = await tx.$queryRaw<
    { id: string; customer_id: string; status: OrderStatus; currency: string; total_amount: bigint }[]
  >`SELECT id::text, customer_id::text, status, currency, total_amount FROM orders WHERE id = ${orderId}::uuid FOR NO KEY UPDATE`
  if (!row) return undefined
  const order: LockedOrder = {
    id: row.id,
    customerId: row.customer_id,
    status: row.status,
    currency: row.currency,
    totalAmount: Number(row.total_amount),
  }
  const transition = decide(order.status, command, now)
  if (transition.kind === 'confirmed') {
    await tx.order.update({
      where: { id: orderId },
      data: { status: 'CONFIRMED', confirmedAt: now, updatedAt: now },
    })
  } else if (transition.kind === 'cancelled') {
    await tx.order.update({
      where: { id: orderId },
      data: {
        status: 'CANCELLED',
        cancellationReason: transition.reason,
        failedStep: transition.failedStep,
        cancelledAt: now,
        updatedAt: now,
      },
    })
  }
  return { order, transition }
}
