/**
 * The order's rules, pure: totals and status transitions. No I/O; time is passed in.
 */
import type { CancelReason, FailedStep, OrderLine } from '@saga/contracts'

/**
 * ORDER_DEADLINE_MS's default, how long an order may stay PENDING: 10 minutes, far above a healthy
 * saga (tens of ms) and its retries.
 */
export const DEFAULT_ORDER_DEADLINE_MS = 10 * 60_000

/**
 * The version of OrderCreated new orders are announced with (ORDER_CREATED_VERSION): 1 publishes
 * `order.created.v1`, 2 publishes `order.created.v2`.
 */
export type OrderCreatedVersion = 1 | 2

/** Where an order is in its life. PENDING until the chain ends; CONFIRMED and CANCELLED are terminal. */
export type OrderStatus = 'PENDING' | 'CONFIRMED' | 'CANCELLED'

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

/** The chain's success: confirm the order with its shipment. */
export interface ConfirmCommand {
  kind: 'confirm'
  shipmentId: string
}
/**
 * Cancel the order keeping the reason: a step failed (its reason code and step), its deadline passed
 * (`deadline_exceeded` and the step it was waiting for), or the customer or an operator asked
 * (`customer_requested`, `operator_requested`, no step).
 */
export interface CancelCommand {
  kind: 'cancel'
  reason: string
  failedStep?: FailedStep | undefined
}
/** What the chain asks of an order. */
export type OrderCommand = ConfirmCommand | CancelCommand

/** Nothing to change, with why (a repeated or a contradicting command). */
export interface Unchanged<W extends string> {
  kind: 'unchanged'
  why: W
}
/** What a confirm does: the order becomes CONFIRMED at `at`, or nothing. */
export type ConfirmTransition =
  | { kind: 'confirmed'; status: 'CONFIRMED'; at: Date }
  | Unchanged<'already-confirmed' | 'cancelled-orders-are-never-confirmed'>
/** What a cancel does: the order becomes CANCELLED at `at` keeping reason and step, or nothing. */
export type CancelTransition =
  | {
      kind: 'cancelled'
      status: 'CANCELLED'
      reason: string
      failedStep: FailedStep | undefined
      at: Date
    }
  | Unchanged<'already-cancelled' | 'confirmed-orders-are-never-cancelled'>
/** The outcome of a command: a change to make (and announce), or nothing, with why. */
export type Transition = ConfirmTransition | CancelTransition

/**
 * Decides what `command` does to an order in `status` at time `now`:
 * PENDING -> CONFIRMED on confirm, PENDING -> CANCELLED on cancel; a terminal order never changes.
 * A repeated command (same target) is unchanged rather than an error, because the chain delivers at
 * least once; a contradicting one (cancel a confirmed order) is unchanged too, and reported by why.
 */
export function decide(status: OrderStatus, command: ConfirmCommand, now: Date): ConfirmTransition
export function decide(status: OrderStatus, command: CancelCommand, now: Date): CancelTransition
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

/** Who ended an order CANCELLED: a failing step, its deadline, its customer, or an operator. */
export type CancelCause = 'step' | 'deadline' | 'customer' | 'operator'

const CAUSES: ReadonlyMap<string, CancelCause> = new Map<CancelReason, CancelCause>([
  ['deadline_exceeded', 'deadline'],
  ['customer_requested', 'customer'],
  ['operator_requested', 'operator'],
])

/** The cause of a cancellation with `reason` (a reason of `CancelReason`, else a step's code). */
export const cancelCause = (reason: string): CancelCause => CAUSES.get(reason) ?? 'step'

/**
 * The `cause` label of `saga_order_cancellations_total`: the failed step for a step's failure, else the
 * reason; bounded to six values whatever reason codes the steps invent.
 */
export const cancellationLabel = (reason: string, failedStep: FailedStep | undefined): string =>
  cancelCause(reason) === 'step' ? (failedStep ?? 'payment') : reason

/**
 * The step a PENDING order still waits for, from the facts in its timeline (routing keys or types
 * seen): no PaymentProcessed yet -> payment; no StockReserved yet -> stock; else shipment.
 */
export function waitingStep(seen: { paymentProcessed: boolean; stockReserved: boolean }): FailedStep {
  if (!seen.paymentProcessed) return 'payment'
  if (!seen.stockReserved) return 'stock'
  return 'shipment'
}

/** The timeline note of an OrderCancelled: what caused it, in words (`GET /orders/:id`, the CLI). */
export function cancelNote(reason: string, failedStep: FailedStep | undefined): string {
  switch (cancelCause(reason)) {
    case 'customer':
      return 'cancelled by the customer'
    case 'operator':
      return 'cancelled by an operator'
    case 'deadline':
      return `cancelled by its deadline while waiting for ${failedStep ?? 'a step'}`
    case 'step':
      return `cancelled because ${failedStep ?? 'a step'} failed (${reason})`
  }
}

/** The timeline note of a fact that reached an order already terminal: recorded, acted on never. */
export const lateNote = (status: OrderStatus): string => `late: the order was already ${status}`
