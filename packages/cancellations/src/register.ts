import { OrderCancelled } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition, ReactionDeps } from '@saga/messaging'
import type pg from 'pg'

/**
 * The cancellation register of the services that undo a step (payment, inventory, shipment; see
 * docs/architecture.md, "Cancellation and late facts"): each records every OrderCancelled it sees in
 * its own `cancelled_order` table, in the transaction of the undo it causes, so a step fact handled
 * later does nothing; and every step and cancel transaction first takes the order's advisory lock,
 * so of a step and a cancel handled at the same moment one waits for the other and then sees its
 * effect in its next statement (READ COMMITTED takes a fresh snapshot per statement).
 */

/**
 * The table, as `sql/cancelled-order.sql` (exported as `@saga/cancellations/sql/cancelled-order.sql`)
 * creates it and each of those services' migration 20261130160000_cancelled_orders copies it:
 * `cancelled_order(order_id uuid pk, reason text, cancelled_at timestamptz(3), recorded_at
 * timestamptz(3) default now)`.
 */
export const CANCELLED_ORDER_TABLE = 'cancelled_order'

/**
 * A boolean SQL expression, true when the order `$1` (a uuid) is recorded as cancelled: for a
 * service that folds the check into a query of its own, so the step pays no extra round trip.
 */
export const ORDER_IS_CANCELLED_SQL = `EXISTS (SELECT 1 FROM ${CANCELLED_ORDER_TABLE} WHERE order_id = $1::uuid)`

/** What a step service knows of an order (`stepStateQuery`). */
export interface StepState {
  /** The order has a row in the service's step table: its step was handled for the order. */
  handled: boolean
  /** The order is recorded as cancelled (a `cancelled_order` row). */
  cancelled: boolean
}

/**
 * The query of `service` (e.g. `inventory`) for what it knows of an order, in one round trip: whether
 * its `stepTable` (a table with an `order_id uuid` column, e.g. `reservation`, `shipment`) has a row of
 * the order, the record that its step was handled, and whether the order is recorded as cancelled.
 * The statement, named `<service>.order-state` (pg prepares it once per connection), is built here
 * once; the returned function runs it inside the caller's transaction `tx`.
 */
export function stepStateQuery(
  service: string,
  stepTable: string,
): (tx: pg.ClientBase, orderId: string) => Promise<StepState> {
  const name = `${service}.order-state`
  const text = `SELECT EXISTS (SELECT 1 FROM ${stepTable} WHERE order_id = $1::uuid) AS handled,
      ${ORDER_IS_CANCELLED_SQL} AS cancelled`
  return async (tx, orderId) => {
    const { rows } = await tx.query<StepState>({ name, text, values: [orderId] })
    return rows[0] ?? { handled: false, cancelled: false }
  }
}

/** An order's cancellation as a service records it (from OrderCancelled). */
export interface Cancellation {
  orderId: string
  /** The order's cancellation reason: a failed step's code, `deadline_exceeded` or `customer_requested`. */
  reason: string
  cancelledAt: Date
}

/** One service's access to its register, inside the transaction (`tx`) the caller is in. */
export interface CancellationRegister {
  /**
   * Takes the order's transaction-scoped advisory lock (`pg_advisory_xact_lock` on
   * `hashtextextended(order_id, 0)`), held until COMMIT or ROLLBACK. Take it before any row lock.
   */
  takeOrderLock(tx: pg.ClientBase, orderId: string): Promise<void>
  /** Whether the order is recorded as cancelled. */
  isCancelled(tx: pg.ClientBase, orderId: string): Promise<boolean>
  /** Records that the order is cancelled; false, storing nothing, when it was recorded already. */
  saveCancellation(tx: pg.ClientBase, cancellation: Cancellation): Promise<boolean>
}

const IS_CANCELLED_SQL = `SELECT 1 FROM ${CANCELLED_ORDER_TABLE} WHERE order_id = $1::uuid`
const SAVE_CANCELLATION_SQL = `INSERT INTO ${CANCELLED_ORDER_TABLE} (order_id, reason, cancelled_at)
  VALUES ($1::uuid, $2, $3) ON CONFLICT (order_id) DO NOTHING`

/**
 * The register of `service` (e.g. `payment`). Its statements are named `<service>.lock-order`,
 * `<service>.is-cancelled` and `<service>.save-cancellation`: pg prepares each once per connection.
 */
export function cancellationRegister(service: string): CancellationRegister {
  const names = {
    lock: `${service}.lock-order`,
    check: `${service}.is-cancelled`,
    save: `${service}.save-cancellation`,
  }
  return {
    async takeOrderLock(tx, orderId) {
      await tx.query({
        name: names.lock,
        text: 'SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))',
        values: [orderId],
      })
    },
    async isCancelled(tx, orderId) {
      const { rowCount } = await tx.query({
        name: names.check,
        text: IS_CANCELLED_SQL,
        values: [orderId],
      })
      return (rowCount ?? 0) > 0
    },
    async saveCancellation(tx, c) {
      const { rowCount } = await tx.query({
        name: names.save,
        text: SAVE_CANCELLATION_SQL,
        values: [c.orderId, c.reason, c.cancelledAt],
      })
      return (rowCount ?? 0) > 0
    },
  }
}

/**
 * The OrderCancelled handler `name` of a step service: takes the order's lock, records the
 * cancellation in `register` (one already recorded, e.g. a second OrderCancelled for the order under
 * a new message id, is logged at info and handled again), then runs `undo` in the same transaction:
 * the service's own compensation (refund, release, cancel the shipment), which emits its undo fact
 * or nothing.
 */
export function undoWhenOrderCancelled<Tx extends pg.ClientBase>(
  name: string,
  register: CancellationRegister,
  deps: ReactionDeps,
  undo: (tx: Tx, message: ConsumedMessage<OrderCancelled>) => Promise<unknown>,
): HandlerDefinition<Tx, OrderCancelled> {
  return {
    name,
    message: OrderCancelled,
    async handle(message, tx) {
      const { orderId, reason, cancelledAt } = message.payload
      await register.takeOrderLock(tx, orderId)
      if (!(await register.saveCancellation(tx, { orderId, reason, cancelledAt: new Date(cancelledAt) }))) {
        deps.logger.info(
          { orderId, messageId: message.id, correlationId: message.correlationId },
          'order cancellation already recorded',
        )
      }
      await undo(tx, message)
    },
  }
}
