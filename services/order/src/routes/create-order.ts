import { randomUUID } from 'node:crypto'
import {
  downcastOrderCreatedV2toV1,
  OrderCreatedV1,
  OrderCreatedV2,
  type OrderCreatedV2 as OrderCreatedV2Payload,
} from '@saga/contracts'
import { enqueue, firstEvent, type Database } from '@saga/messaging'
import { DEFAULT_ORDER_DEADLINE_MS, orderTotal, type OrderCreatedVersion } from '../domain/order.js'
import { waitingFor } from '../domain/waiting.js'
import type { PrismaClient } from '../generated/prisma/client.js'
import type { Tx } from '../plugins/db.js'
import type { CreateOrderBody, OrderView } from '../schemas.js'
import {
  claimKey,
  findStoredResponse,
  insertOrder,
  requestHash,
  type StoredResponse,
} from '../store/orders.js'

/**
 * What `createOrder` did: created a new order; replayed the response stored for the key by an
 * earlier request with the same body; or found the key used for a different body (a 409).
 */
export type CreateOrderResult =
  | { kind: 'created'; order: OrderView }
  | { kind: 'replayed'; response: StoredResponse }
  | { kind: 'key-reused'; key: string }

/** What `createOrder` needs: Prisma for the idempotency look-up, `database` for the write, the clock. */
export interface CreateOrderDeps {
  db: PrismaClient
  /** In the app `messaging`, whose transaction wakes the relay to publish the OrderCreated at once. */
  database: Database<Tx>
  clock: () => Date
}

/** Thrown inside the transaction to roll a duplicate back once a concurrent request won the key. */
class KeyTaken extends Error {}

/** The OrderCreated v2 payload of a validated request (checked against the contract by `firstEvent`). */
export const orderCreatedPayload = (
  orderId: string,
  body: CreateOrderBody,
  total: number,
  createdAt: Date,
): OrderCreatedV2Payload => ({
  orderId,
  customerId: body.customerId,
  total: { amount: total, currency: body.currency },
  lines: body.items,
  shippingAddress: body.shippingAddress,
  paymentMethod: body.paymentMethod,
  createdAt: createdAt.toISOString(),
})

/**
 * The first event of a new order in the version ORDER_CREATED_VERSION names: v2 as built, or v1 as
 * its downcast, byte for byte the payload a build before v2 existed wrote.
 */
function orderCreatedEvent(
  order: OrderCreatedV2Payload,
  version: OrderCreatedVersion,
  occurredAt: Date,
): ReturnType<typeof firstEvent> {
  const aggregateId = order.orderId
  return version === 1
    ? firstEvent(OrderCreatedV1, { aggregateId, payload: downcastOrderCreatedV2toV1(order), occurredAt })
    : firstEvent(OrderCreatedV2, { aggregateId, payload: order, occurredAt })
}

/** A new order as the API shows it, built from what was written (no read-back: a POST costs fewer round trips). */
function newOrderView(
  order: OrderCreatedV2Payload,
  fact: { type: string; messageId: string },
  deadlineAt: Date,
): OrderView {
  const at = order.createdAt
  const { type, messageId } = fact
  return {
    id: order.orderId,
    customerId: order.customerId,
    status: 'PENDING',
    currency: order.total.currency,
    total: order.total.amount,
    cancellationReason: null,
    failedStep: null,
    waitingFor: waitingFor([type]),
    createdAt: at,
    updatedAt: at,
    items: order.lines,
    shippingAddress: order.shippingAddress,
    deadlineAt: deadlineAt.toISOString(),
    confirmedAt: null,
    cancelledAt: null,
    events: [
      {
        id: messageId,
        messageId,
        type,
        source: 'order',
        occurredAt: at,
        recordedAt: at,
        note: null,
      },
    ],
  }
}

/**
 * Enqueues the order's OrderCreated in the version `settings.version` names (the first event of its
 * saga: a new correlation), then writes the order, its lines and the first timeline entry (the fact
 * as published: its type and payload) with `insertOrder`; returns the order as the API shows it.
 */
async function placeOrder(
  tx: Tx,
  orderId: string,
  body: CreateOrderBody,
  now: Date,
  settings: { deadlineMs: number; version: OrderCreatedVersion },
): Promise<OrderView> {
  const order = orderCreatedPayload(orderId, body, orderTotal(body.items), now)
  const event = orderCreatedEvent(order, settings.version, now)
  // Enqueued first, for its message id: in a pgDatabase transaction the outbox INSERT itself is
  // sent with the COMMIT (deferOutboxRow), so this costs no round trip.
  const messageId = await enqueue(tx, event)
  const deadlineAt = await insertOrder(tx, {
    order,
    fact: { type: event.type, payload: event.payload },
    messageId,
    createdAt: now,
    deadlineMs: settings.deadlineMs,
  })
  return newOrderView(order, { type: event.type, messageId }, deadlineAt)
}

/**
 * Creates a PENDING order, its lines, its OrderCreated outbox row (`order.created.v1` or `.v2`, as
 * `orderCreatedVersion` says) and the first timeline entry in one transaction, so the order exists
 * if and only if its event will be published.
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
  deps: CreateOrderDeps,
  body: CreateOrderBody,
  options: {
    idempotencyKey?: string | undefined
    /** ORDER_DEADLINE_MS; default `DEFAULT_ORDER_DEADLINE_MS`. */
    deadlineMs?: number | undefined
    /** ORDER_CREATED_VERSION; default 1. */
    orderCreatedVersion?: OrderCreatedVersion | undefined
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
  const now = deps.clock()
  try {
    const order = await deps.database.transaction(async (tx) => {
      const view = await placeOrder(tx, orderId, body, now, {
        deadlineMs: options.deadlineMs ?? DEFAULT_ORDER_DEADLINE_MS,
        version: options.orderCreatedVersion ?? 1,
      })
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
