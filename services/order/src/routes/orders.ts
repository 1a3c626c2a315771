import type { Database } from '@saga/messaging'
import { errorResponses, HttpError, withHeaders } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { DEFAULT_ORDER_DEADLINE_MS, type OrderCreatedVersion } from '../domain/order.js'
import type { PrismaClient } from '../generated/prisma/client.js'
import { noMetrics, type OrderMetrics } from '../metrics.js'
import type { Tx } from '../plugins/db.js'
import {
  CREATE_ORDER_BODY_LIMIT,
  CreateOrderBody,
  CreateOrderHeaders,
  ListOrdersQuery,
  OrderPage,
  OrderLookup,
  OrderLookupQuery,
  OrderParams,
  OrderStats,
  OrderStatsQuery,
  OrderView,
} from '../schemas.js'
import { lookupOrders } from '../store/search.js'
import { orderStats } from '../store/stats.js'
import { decodeCursor, findOrderView, listOrders, storedOrderView } from '../store/views.js'
import { cancelByCustomer } from './cancel-order.js'
import { createOrder } from './create-order.js'

/**
 * What the order routes need: reads through `db` (Prisma), writes in `database`'s transactions (in
 * the app `messaging`, which wakes the relay after each), the clock new orders and cancellations
 * are stamped with.
 */
export interface OrderRoutesOptions {
  db: PrismaClient
  database: Database<Tx>
  clock: () => Date
  /** ORDER_DEADLINE_MS for new orders; default `DEFAULT_ORDER_DEADLINE_MS`. */
  deadlineMs?: number | undefined
  /** ORDER_CREATED_VERSION: the version of OrderCreated new orders are announced with; default 1. */
  orderCreatedVersion?: OrderCreatedVersion | undefined
  /** Told of each new order's deadline (ms from now), so the scheduler can wake earlier for it. */
  onDeadline?: ((inMs: number) => void) | undefined
  metrics?: OrderMetrics | undefined
}

/** The app the order routes are declared on: fastify with the zod type provider. */
type OrderApp = Parameters<FastifyPluginCallbackZod<OrderRoutesOptions>>[0]

/**
 * POST /orders, POST /orders/:id/cancel, GET /orders/:id, GET /orders, GET /orders/stats,
 * GET /orders/lookup. Encapsulated (not fastify-plugin): the routes see the
 * app's error handler and type provider but add nothing to it.
 */
export const orderRoutes: FastifyPluginCallbackZod<OrderRoutesOptions> = (app, options, done) => {
  createOrderRoute(app, options)
  cancelOrderRoute(app, options)
  getOrderRoute(app, options)
  listOrdersRoute(app, options)
  orderStatsRoute(app, options)
  lookupOrdersRoute(app, options)
  done()
}

/** POST /orders: places an order (idempotent with an Idempotency-Key) and tells the deadline scheduler. */
function createOrderRoute(app: OrderApp, options: OrderRoutesOptions): void {
  const { db, database, clock, deadlineMs, orderCreatedVersion, onDeadline } = options
  app.post(
    '/orders',
    {
      bodyLimit: CREATE_ORDER_BODY_LIMIT,
      schema: {
        operationId: 'createOrder',
        summary: 'Place an order',
        description:
          'Creates a PENDING order and announces it (OrderCreated). With an Idempotency-Key header, a retry ' +
          'with the same body returns the first response (header idempotent-replayed: true) and creates no ' +
          'second order; the same key with a different body is a 409.',
        tags: ['orders'],
        headers: CreateOrderHeaders,
        body: CreateOrderBody,
        response: {
          201: withHeaders(OrderView, 'The new order, PENDING', 'Location', 'IdempotentReplayed'),
          ...errorResponses(400, 409, 413, 415, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const idempotencyKey = request.headers['idempotency-key']
      const result = await createOrder({ db, database, clock }, request.body, {
        idempotencyKey,
        deadlineMs,
        orderCreatedVersion,
      })
      if (result.kind === 'key-reused') {
        throw new HttpError(409, 'This Idempotency-Key was already used with a different request body', [
          { path: 'headers.idempotency-key', issue: 'already used for a different request body' },
        ])
      }
      if (result.kind === 'replayed') {
        const original = storedOrderView(result.response.body)
        return reply
          .code(201)
          .header('idempotent-replayed', 'true')
          .header('location', `/orders/${original.id}`)
          .send(original)
      }
      onDeadline?.(deadlineMs ?? DEFAULT_ORDER_DEADLINE_MS)
      // The success path is at debug like every handled message's (an order's end, confirmed, too);
      // refusals and cancellations are at info.
      request.log.debug({ orderId: result.order.id, correlationId: result.order.id }, 'order created')
      return reply.code(201).header('location', `/orders/${result.order.id}`).send(result.order)
    },
  )
}

/** The order `id` with its lines and timeline, for a response. @throws HttpError 404 when there is none */
async function orderViewOr404(db: PrismaClient, id: string): Promise<OrderView> {
  const order = await findOrderView(db, id)
  if (!order) throw new HttpError(404, `Order ${id} not found`)
  return order
}

/** POST /orders/:id/cancel: the customer cancels a PENDING order (idempotent; a CONFIRMED one is a 409). */
function cancelOrderRoute(app: OrderApp, options: OrderRoutesOptions): void {
  const { db, database, clock, metrics } = options
  app.post(
    '/orders/:id/cancel',
    {
      schema: {
        operationId: 'cancelOrder',
        summary: 'Cancel a PENDING order (the customer asked)',
        description:
          'Cancels a PENDING order with reason customer_requested and announces it (OrderCancelled), so the ' +
          'steps already done are undone (refund, release, cancel the shipment). Idempotent: an order already ' +
          'CANCELLED (for any reason) is answered 200 as it is, and nothing is announced again. A CONFIRMED ' +
          'order is a 409 naming its status. No request body.',
        tags: ['orders'],
        params: OrderParams,
        response: {
          200: OrderView.describe('The order, CANCELLED'),
          ...errorResponses(400, 404, 409, 500, 503),
        },
      },
    },
    async (request) => {
      const { id } = request.params
      const result = await cancelByCustomer(database, id, clock())
      if (result.kind === 'unknown') throw new HttpError(404, `Order ${id} not found`)
      if (result.kind === 'confirmed') {
        throw new HttpError(409, `Order ${id} is CONFIRMED and can no longer be cancelled`, [
          { path: 'status', issue: 'is CONFIRMED' },
        ])
      }
      if (result.kind === 'cancelled') {
        ;(metrics ?? noMetrics).cancelled(result.event.reason, undefined, result.ageSeconds)
        request.log.info({ orderId: id, correlationId: id }, 'order cancelled by the customer')
      }
      return orderViewOr404(db, id)
    },
  )
}

/** GET /orders/:id: the order with its lines and timeline, or a 404. */
function getOrderRoute(app: OrderApp, { db }: OrderRoutesOptions): void {
  app.get(
    '/orders/:id',
    {
      schema: {
        operationId: 'getOrder',
        summary: 'An order with its status and the events seen for it',
        tags: ['orders'],
        params: OrderParams,
        response: { 200: OrderView.describe('The order'), ...errorResponses(400, 404, 500, 503) },
      },
    },
    async (request) => orderViewOr404(db, request.params.id),
  )
}

/** GET /orders: a page of orders matching the filters, newest first. */
function listOrdersRoute(app: OrderApp, { db }: OrderRoutesOptions): void {
  app.get(
    '/orders',
    {
      schema: {
        operationId: 'listOrders',
        summary: 'Orders, newest first, filtered; paged with nextCursor',
        description:
          'Every filter given must hold. waitingFor and deadlineBefore select PENDING orders only, ' +
          'cancellationReason CANCELLED ones; placedAfter is inclusive, placedBefore exclusive. Keyset-paged: ' +
          'pass nextCursor as cursor, with the same filters, for the next page (null on the last).',
        tags: ['orders'],
        querystring: ListOrdersQuery,
        response: { 200: OrderPage.describe('A page of orders'), ...errorResponses(400, 500, 503) },
      },
    },
    async (request) => {
      const { limit, cursor, placedAfter, placedBefore, deadlineBefore, ...filters } = request.query
      const after = cursor === undefined ? undefined : decodeCursor(cursor)
      if (cursor !== undefined && !after) {
        throw new HttpError(400, 'The request is invalid', [
          { path: 'querystring.cursor', issue: 'is not a cursor this API returned' },
        ])
      }
      return listOrders(db, {
        ...filters,
        placedAfter: instant(placedAfter),
        placedBefore: instant(placedBefore),
        deadlineBefore: instant(deadlineBefore),
        limit,
        after,
      })
    },
  )
}

/** GET /orders/stats: the console's figures of the orders, now and over the last window. */
function orderStatsRoute(app: OrderApp, { db }: OrderRoutesOptions): void {
  app.get(
    '/orders/stats',
    {
      schema: {
        operationId: 'getOrderStats',
        summary: 'Orders by status and step now, and the orders that ended in each 10 s of a window',
        description:
          'One snapshot of the database: orders by status; PENDING orders by the step they wait for and past ' +
          'their deadline; for each 10-second bucket of the last windowSeconds (oldest first, aligned to ' +
          'multiples of 10 s, the last one still filling), the orders confirmed and cancelled in it and the ' +
          'median and 99th percentile of their time from creation to that end. Times are the database clock.',
        tags: ['orders'],
        querystring: OrderStatsQuery,
        response: { 200: OrderStats.describe('The figures'), ...errorResponses(400, 500, 503) },
      },
    },
    async (request) => orderStats(db, request.query.windowSeconds),
  )
}

/** GET /orders/lookup: the orders an id names, whatever kind of id it is. */
function lookupOrdersRoute(app: OrderApp, { db }: OrderRoutesOptions): void {
  app.get(
    '/orders/lookup',
    {
      schema: {
        operationId: 'lookupOrders',
        summary:
          'The orders an id names: an order id or its start, a customer id, an Idempotency-Key, a message id',
        description:
          'Tries the text as every kind of id this service keeps, each on an index, and answers every order found ' +
          'with the kind it was found as; at most two per kind (a second says there are more: list them with ' +
          'customerId or idPrefix). The start of an order id needs 4 hex digits at least. No match is an empty ' +
          'list, not a 404.',
        tags: ['orders'],
        querystring: OrderLookupQuery,
        response: { 200: OrderLookup.describe('The orders found'), ...errorResponses(400, 500, 503) },
      },
    },
    async (request) => lookupOrders(db, request.query.id),
  )
}

/** A validated ISO 8601 query value as a Date. */
const instant = (text: string | undefined): Date | undefined =>
  text === undefined ? undefined : new Date(text)
