import { randomUUID } from 'node:crypto'
import { OrderCreated } from '@saga/contracts'
import { enqueue, firstEvent } from '@saga/messaging'
import { orderTotal } from '../domain/order.js'
import type { CreateOrderBody, OrderView } from '../schemas.js'
import { claimKey, findStoredResponse, requestHash, type StoredResponse } from './idempotency.js'
import type { Db, Transactor, Tx } from './types.js'

/**
 * What `createOrder` did: created a new order; replayed the response stored for the key by an
 * earlier request with the same body; or found the key used for a different body (a 409).
 */
export type CreateOrderResult =
  | { kind: 'created'; order: OrderView }
  | { kind: 'replayed'; response: StoredResponse }
  | { kind: 'key-reused'; key: string }

/** ORDER_DEADLINE_MS's default: 10 minutes, far above a healthy saga (tens of ms) and its retries. */
export const DEFAULT_ORDER_DEADLINE_MS = 10 * 60_000

/** Thrown inside the transaction to roll a duplicate back once a concurrent request won the key. */
class KeyTaken extends Error {}

/** The OrderCreated payload of a validated request (checked against the contract by `firstEvent`). */
export const orderCreatedPayload = (
  orderId: string,
  body: CreateOrderBody,
  total: number,
  createdAt: Date,
): OrderCreated => ({
  orderId,
  customerId: body.customerId,
  currency: body.currency,
  lines: body.items,
  totalAmount: total,
  shippingAddress: body.shippingAddress,
  paymentMethod: body.paymentMethod,
  createdAt: createdAt.toISOString(),
})

/**
 * Writes the order, its lines, the OrderCreated outbox row and the first timeline entry, and returns
 * the order as the API shows it, built from what was written (no read-back: a POST costs fewer round trips).
 */
async function insertOrder(
  tx: Tx,
  orderId: string,
  body: CreateOrderBody,
  now: Date,
  deadlineMs: number,
): Promise<OrderView> {
  const total = orderTotal(body.items)
  const address = body.shippingAddress
  const event = firstEvent(OrderCreated, {
    aggregateId: orderId,
    payload: orderCreatedPayload(orderId, body, total, now),
    occurredAt: now,
  })
  const payload = event.payload
  // Enqueued first, for its message id: in a pgDatabase transaction the outbox INSERT itself is
  // sent with the COMMIT (deferToCommit), so this costs no round trip.
  const messageId = await enqueue(tx, event)
  // The order, its lines and its first timeline entry in one statement (one round trip): the
  // foreign keys of the lines and of the timeline row are checked at the statement's end, when the
  // order row exists. The deadline is the database's clock plus ORDER_DEADLINE_MS, the clock the
  // deadline scheduler judges it by (one clock, issue 14).
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
      orderId,
      body.customerId,
      body.currency,
      total,
      body.paymentMethod,
      address.name,
      address.line1,
      address.city,
      address.postalCode,
      address.country,
      now,
      body.items.map((item) => item.sku),
      body.items.map((item) => item.quantity),
      body.items.map((item) => item.unitPrice),
      deadlineMs,
      messageId,
      OrderCreated.type,
      JSON.stringify(payload),
    ],
  })
  const deadlineAt = rows[0]?.deadline_at
  if (!deadlineAt) throw new Error(`order ${orderId} was inserted without a deadline`)
  const at = now.toISOString()
  return {
    id: orderId,
    customerId: body.customerId,
    status: 'PENDING',
    currency: body.currency,
    total,
    cancellationReason: null,
    failedStep: null,
    createdAt: at,
    updatedAt: at,
    items: body.items,
    shippingAddress: body.shippingAddress,
    deadlineAt: deadlineAt.toISOString(),
    confirmedAt: null,
    cancelledAt: null,
    events: [
      { id: messageId, type: OrderCreated.type, source: 'order', occurredAt: at, recordedAt: at, note: null },
    ],
  }
}

/**
 * Creates a PENDING order, its lines, its OrderCreated outbox row and the first timeline entry in one
 * transaction, so the order exists if and only if its event will be published.
 *
 * The order's deadline (`deadline_at`) is set in the same transaction, `deadlineMs` after the database's
 * `now()`; the deadline scheduler cancels the order if it is still PENDING then.
 *
 * With an idempotency key, the 201 response is stored under the key in that same transaction. A
 * retry after commit finds it up front. Two concurrent requests with one key may both build an
 * order, but the second one's key INSERT waits for the first to commit, finds the key taken, rolls
 * its own order back and replays the first response; so one key never makes two orders.
 */
export async function createOrder(
  deps: { db: Db; transactor: Transactor },
  body: CreateOrderBody,
  options: {
    idempotencyKey?: string | undefined
    now?: Date | undefined
    /** ORDER_DEADLINE_MS; default `DEFAULT_ORDER_DEADLINE_MS`. */
    deadlineMs?: number | undefined
  } = {},
): Promise<CreateOrderResult> {
  const key = options.idempotencyKey
  const hash = requestHash(body)
  const replay = async (): Promise<CreateOrderResult> => {
    const stored = key === undefined ? undefined : await findStoredResponse(deps.db, key)
    if (!stored || key === undefined) throw new Error('idempotency key reported taken but not found')
    return stored.requestHash === hash ? { kind: 'replayed', response: stored } : { kind: 'key-reused', key }
  }
  if (key !== undefined && (await findStoredResponse(deps.db, key))) return replay()

  const orderId = randomUUID()
  const now = options.now ?? new Date()
  try {
    const order = await deps.transactor.transaction(async (tx) => {
      const view = await insertOrder(tx, orderId, body, now, options.deadlineMs ?? DEFAULT_ORDER_DEADLINE_MS)
      if (
        key !== undefined &&
        !(await claimKey(tx, key, orderId, { requestHash: hash, status: 201, body: view }))
      ) {
        throw new KeyTaken()
      }
      return view
    })
    return { kind: 'created', order }
  } catch (error) {
    if (error instanceof KeyTaken) return replay()
    throw error
  }
}
