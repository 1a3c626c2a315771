/**
 * The order's rules, pure: totals and status transitions. No I/O; time is passed in.
 */
import type { FailedStep, OrderLine } from '@saga/contracts'

/** Where an order is in its life. PENDING until the chain ends; CONFIRMED and CANCELLED are terminal. */
export type OrderStatus = 'PENDING' | 'CONFIRMED' | 'CANCELLED'

/** The statuses an order can still leave; an order in any other is done and never changes. */
export const isTerminal = (status: OrderStatus): boolean => status !== 'PENDING'

/**
 * Sum of quantity x unitPrice over the lines, in minor units of the order's currency.
 * @throws RangeError when the sum is not an exact integer in a JS number (beyond 2^53 - 1);
 *   the request limits keep real orders far below (at most 1e13).
 */
export function orderTotal(lines: ReadonlyArray<Pick<OrderLine, 'quantity' | 'unitPrice'>>): number {
  const total = lines.reduce((sum, line) => sum + line.quantity * line.unitPrice, 0)
  if (!Number.isSafeInteger(total)) throw new RangeError(`order total ${total} is not a safe integer`)
  return total
}

/** What the chain asks of an order. */
export type OrderCommand =
  { kind: 'confirm'; shipmentId: string } | { kind: 'cancel'; reason: string; failedStep: FailedStep }

/** The outcome of a command: a change to make (and announce), or nothing, with why. */
export type Transition =
  | { kind: 'confirmed'; status: 'CONFIRMED'; at: Date }
  | { kind: 'cancelled'; status: 'CANCELLED'; reason: string; failedStep: FailedStep; at: Date }
  | {
      kind: 'unchanged'
      why:
        | 'already-confirmed'
        | 'already-cancelled'
        | 'confirmed-orders-are-never-cancelled'
        | 'cancelled-orders-are-never-confirmed'
    }

/**
 * Decides what `command` does to an order in `status` at time `now`:
 * PENDING -> CONFIRMED on confirm, PENDING -> CANCELLED on cancel; a terminal order never changes.
 * A repeated command (same target) is unchanged rather than an error, because the chain delivers at
 * least once; a contradicting one (cancel a confirmed order) is unchanged too, and reported by why.
 */
export function decide(status: OrderStatus, command: OrderCommand, now: Date): Transition {
  if (command.kind === 'confirm') {
    if (status === 'PENDING') return { kind: 'confirmed', status: 'CONFIRMED', at: now }
    return {
      kind: 'unchanged',
      why: status === 'CONFIRMED' ? 'already-confirmed' : 'cancelled-orders-are-never-confirmed',
    }
  }
  if (status === 'PENDING') {
    return {
      kind: 'cancelled',
      status: 'CANCELLED',
      reason: command.reason,
      failedStep: command.failedStep,
      at: now,
    }
  }
  return {
    kind: 'unchanged',
    why: status === 'CANCELLED' ? 'already-cancelled' : 'confirmed-orders-are-never-cancelled',
  }
}
