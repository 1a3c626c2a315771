/**
 * The order service's SQL on its orders (orders, order_lines, idempotency_keys), written against
 * the service's transaction (`Tx`, a pg client inside BEGIN: no Prisma on the write path), so the
 * reactions, the routes' writes and the deadline scheduler read load -> decide -> save -> enqueue ->
 * log. The rules (what a command does to an order, totals, notes) are in domain/order.ts; the
 * timeline's SQL is in store/timeline.ts, the API's reads in store/views.ts. Named statements: pg
 * prepares each once per connection.
 */
import { createHash } from 'node:crypto'
import { Currency, PaymentProcessed, StockReserved, type OrderCreatedV2 } from '@saga/contracts'
import type pg from 'pg'
import type { OrderStatus, Transition } from '../domain/order.js'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { Tx } from '../plugins/db.js'

/** A new order's row, lines and first timeline entry (its OrderCreated), as `insertOrder` writes them. */
export interface NewOrder {
  /** The order's facts as OrderCreated v2 has them (amounts in minor units): the row and its lines. */
  order: OrderCreatedV2
  /**
   * The OrderCreated as published (`order.created.v1` or `.v2` and its payload): the timeline entry's
   * type and data.
   */
  fact: { type: string; payload: unknown }
  /** The OrderCreated outbox row's message id, the timeline entry's key. */
  messageId: string
  /** created_at, updated_at and the timeline entry's times: the service's clock. */
  createdAt: Date
  /** ORDER_DEADLINE_MS: the deadline is the database's `now()` plus this, ms. */
  deadlineMs: number
}

/**
 * Writes the order, its lines and its first timeline entry (OrderCreated) in one statement (one
 * round trip): the foreign keys of the lines and of the timeline row are checked at the statement's
 * end, when the order row exists. The deadline is the database's clock plus `deadlineMs`, the clock
 * the deadline scheduler judges it by, so a skewed service clock cannot move it. Returns the
 * deadline.
 * @throws Error when the database returned no deadline (the INSERT wrote no order row)
 */
export async function insertOrder(
  tx: Tx,
  { order, fact, messageId, createdAt, deadlineMs }: NewOrder,
): Promise<Date> {
  const address = order.shippingAddress
  const { rows } = await tx.query<{ deadline_at: Date }>({
    name: 'order.insert-order',
    text: `WITH o AS (
        INSERT INTO orders (id, customer_id, currency, total_amount, payment_method, ship_name, ship_line1,
                            ship_city, ship_postal_code, ship_country, created_at, updated_at, deadline_at)
        VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11,
                now() + $15::int * interval '1 millisecond')
        RETURNING deadline_at
      ), l AS (
        INSERT INTO order_lines (order_id, line_no, sku, quantity, unit_price)
        SELECT $1::uuid, l.n, l.sku, l.quantity, l.unit_price
        FROM unnest($12::text[], $13::int[], $14::int[]) WITH ORDINALITY AS l(sku, quantity, unit_price, n)
      ), e AS (
        INSERT INTO order_events (message_id, order_id, type, source, occurred_at, recorded_at, data)
        VALUES ($16::uuid, $1::uuid, $17, 'order', $11, $11, $18::jsonb)
      )
      SELECT deadline_at FROM o`,
    values: [
      order.orderId,
      order.customerId,
      order.total.currency,
      order.total.amount,
      order.paymentMethod,
      address.name,
      address.line1,
      address.city,
      address.postalCode,
      address.country,
      createdAt,
      order.lines.map((line) => line.sku),
      order.lines.map((line) => line.quantity),
      order.lines.map((line) => line.unitPrice),
      deadlineMs,
      messageId,
      fact.type,
      JSON.stringify(fact.payload),
    ],
  })
  const deadlineAt = rows[0]?.deadline_at
  if (!deadlineAt) throw new Error(`order ${order.orderId} was inserted without a deadline`)
  return deadlineAt
}

/** A stored first response to a keyed POST /orders. */
export interface StoredResponse {
  requestHash: string
  status: number
  body: unknown
}

/**
 * sha256 (hex) of the validated request body. The body is the zod parse output, whose keys follow
 * the schema's order, so two JSON texts with the same content in another key order hash the same.
 */
export const requestHash = (body: unknown): string =>
  createHash('sha256').update(JSON.stringify(body)).digest('hex')

/** The first response stored under `key`, if any (a read outside any transaction, through Prisma). */
export async function findStoredResponse(db: PrismaClient, key: string): Promise<StoredResponse | undefined> {
  const row = await db.idempotencyKey.findUnique({ where: { key } })
  return row
    ? { requestHash: row.requestHash, status: row.responseStatus, body: row.responseBody }
    : undefined
}

/**
 * Stores the response of the request that created `orderId` under `key`, in the transaction that
 * created the order. Returns false when another request committed the key first: the unique index
 * makes this INSERT wait for a concurrent holder of the key and then skip, so the caller must roll
 * its order back and answer with the winner's response.
 */
export async function claimKey(
  tx: Tx,
  key: string,
  orderId: string,
  response: StoredResponse,
): Promise<boolean> {
  const { rowCount } = await tx.query({
    name: 'order.claim-key',
    text: `INSERT INTO idempotency_keys (key, request_hash, order_id, response_status, response_body)
      VALUES ($1, $2, $3::uuid, $4, $5::jsonb)
      ON CONFLICT (key) DO NOTHING`,
    values: [key, response.requestHash, orderId, response.status, JSON.stringify(response.body)],
  })
  return rowCount === 1
}

/** The facts of a locked order the reactions decide on and announce. */
export interface LockedOrder {
  id: string
  customerId: string
  status: OrderStatus
  currency: Currency
  /** Minor units of `currency`. */
  totalAmount: number
}

/**
 * Locks the order row for a status change; a concurrent reaction for the same order waits for the
 * lock and then sees the new status. `FOR NO KEY UPDATE` (what an UPDATE of non-key columns takes
 * anyway) rather than `FOR UPDATE`: it does not conflict with the key-share locks that timeline
 * inserts take through their foreign key, so recording an event never waits for, or deadlocks with,
 * a status change. Returns undefined when the order is unknown here.
 * @throws ZodError when the stored currency is not an ISO 4217 code (only a validated POST /orders writes it)
 */
export async function lockOrder(tx: Tx, orderId: string): Promise<LockedOrder | undefined> {
  const { rows } = await tx.query<{
    id: string
    customer_id: string
    status: OrderStatus
    currency: string
    total_amount: string
  }>({
    name: 'order.lock-order',
    text: `SELECT id::text, customer_id::text, status, currency, total_amount::text
      FROM orders WHERE id = $1::uuid FOR NO KEY UPDATE`,
    values: [orderId],
  })
  const row = rows[0]
  if (!row) return undefined
  return {
    id: row.id,
    customerId: row.customer_id,
    status: row.status,
    currency: Currency.parse(row.currency),
    totalAmount: Number(row.total_amount),
  }
}

/** An order that reached a final state: its status and its age then (seconds, database clock). */
export interface FinalState {
  status: 'CONFIRMED' | 'CANCELLED'
  /** From the order's created_at to the statement that made it final, both the database's clock. */
  ageSeconds: number
}

// Both ends on the database's clock, so a skewed service clock cannot bend the figure.
const AGE_SECONDS = 'EXTRACT(EPOCH FROM clock_timestamp() - created_at)::float8 AS age_seconds'

/** A change `decide` returned: the order becomes CONFIRMED or CANCELLED. */
export type Change = Exclude<Transition, { kind: 'unchanged' }>

/**
 * Writes the change `decide` returned for the order. Each UPDATE is guarded by `status = 'PENDING'`
 * as well as by the row lock the caller holds (`lockOrder`), so of a confirm and a cancel racing for
 * one order exactly one changes it. Returns the final state the order reached with its age (for
 * `saga_order_time_to_final_state_seconds`).
 * @throws Error when the row was no longer PENDING (only possible when the caller did not lock it
 *   first); the transaction then rolls back and is retried
 */
export async function saveTransition(tx: Tx, orderId: string, change: Change): Promise<FinalState> {
  const saved: pg.QueryResult<{ age_seconds: number }> =
    change.kind === 'confirmed'
      ? await tx.query({
          name: 'order.confirm',
          text: `UPDATE orders SET status = $2::"OrderStatus", confirmed_at = $3, updated_at = $3
        WHERE id = $1::uuid AND status = 'PENDING' RETURNING ${AGE_SECONDS}`,
          values: [orderId, change.status, change.at],
        })
      : await tx.query({
          name: 'order.cancel',
          text: `UPDATE orders SET status = $2::"OrderStatus", cancellation_reason = $3, failed_step = $4,
        cancelled_at = $5, updated_at = $5 WHERE id = $1::uuid AND status = 'PENDING' RETURNING ${AGE_SECONDS}`,
          values: [orderId, change.status, change.reason, change.failedStep ?? null, change.at],
        })
  const ageSeconds = saved.rows[0]?.age_seconds
  if (ageSeconds === undefined)
    throw new Error(`order ${orderId} was not PENDING when it was to become ${change.kind}`)
  return { status: change.status, ageSeconds }
}

/** A PENDING order past its deadline, claimed for cancelling, with what its timeline has seen. */
export interface DueOrder {
  id: string
  customerId: string
  /** Whether its timeline holds a PaymentProcessed. */
  paymentProcessed: boolean
  /** Whether its timeline holds a StockReserved. */
  stockReserved: boolean
  /** The transaction's `now()`: the cancellation's time, on the database's clock. */
  now: Date
}

/**
 * Claims up to `limit` PENDING orders whose deadline has passed by the database's clock, oldest
 * deadline first, with `FOR NO KEY UPDATE SKIP LOCKED`: the lock `lockOrder` takes, so an order a
 * reaction or a customer's cancel is working on is skipped, and so is a row another scheduler
 * instance claimed (each deadline fires once). The rows stay locked until the transaction ends.
 */
export async function claimDueOrders(tx: Tx, limit: number): Promise<DueOrder[]> {
  const { rows } = await tx.query<{
    id: string
    customer_id: string
    payment_processed: boolean
    stock_reserved: boolean
    now: Date
  }>({
    name: 'order.claim-due-deadlines',
    text: `WITH due AS (
        SELECT id, customer_id FROM orders
        WHERE status = 'PENDING' AND deadline_at <= now()
        ORDER BY deadline_at
        LIMIT $1
        FOR NO KEY UPDATE SKIP LOCKED
      )
      SELECT due.id::text, due.customer_id::text,
        EXISTS (SELECT 1 FROM order_events e WHERE e.order_id = due.id AND e.type = $2) AS payment_processed,
        EXISTS (SELECT 1 FROM order_events e WHERE e.order_id = due.id AND e.type = $3) AS stock_reserved,
        now() AS now
      FROM due`,
    values: [limit, PaymentProcessed.type, StockReserved.type],
  })
  return rows.map((row) => ({
    id: row.id,
    customerId: row.customer_id,
    paymentProcessed: row.payment_processed,
    stockReserved: row.stock_reserved,
    now: row.now,
  }))
}

/**
 * ms from the database's clock to the earliest deadline of a PENDING order (0 when one is already
 * due), or undefined when no PENDING order has a deadline. Reads the partial index's first entry.
 */
export async function nextDeadlineInMs(tx: Tx): Promise<number | undefined> {
  const { rows } = await tx.query<{ in_ms: number | null }>({
    name: 'order.next-deadline',
    text: `SELECT CEIL(EXTRACT(EPOCH FROM (min(deadline_at) - clock_timestamp())) * 1000)::float8 AS in_ms
      FROM orders WHERE status = 'PENDING' AND deadline_at IS NOT NULL`,
  })
  const inMs = rows[0]?.in_ms
  return inMs === null || inMs === undefined ? undefined : Math.max(0, inMs)
}
