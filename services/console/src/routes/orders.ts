import { Id, ORDER_STATUSES, pageLimit, WAITING_FOR } from '@saga/contracts'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { FleetSnapshot } from '../fleet.js'
import { readOrderDetail } from '../order-join.js'
import { searchOrders } from '../search.js'
import type { Upstream } from '../upstream.js'
import { replyAnswer, replyUpstreamError } from './upstream-reply.js'

/** Options of `orderRoutes`. */
export interface OrderRoutesOptions {
  upstream: Upstream
  traceUrlTemplate: string | null
  /** The fleet poller's last snapshot, to judge an order's steps ahead by (health, queues). */
  fleet?: (() => Promise<FleetSnapshot>) | undefined
}

const Instant = z.iso.datetime({ offset: true })

/** The order service's `GET /orders` filters (it validates them again and has the last word). */
export const OrdersQuery = z.strictObject({
  status: z.enum(ORDER_STATUSES).optional(),
  waitingFor: z.enum(WAITING_FOR).optional(),
  cancellationReason: z.string().min(1).max(100).optional(),
  placedAfter: Instant.optional(),
  placedBefore: Instant.optional(),
  deadlineBefore: Instant.optional(),
  customerId: Id.optional(),
  idPrefix: z.string().min(1).max(36).optional(),
  limit: pageLimit(100).optional(),
  cursor: z.string().min(1).max(200).optional(),
})

/** `GET /api/search`: any id someone holds for an order (the order service's lookup takes the same). */
const SearchQuery = z.strictObject({
  q: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/, { error: 'must be printable ASCII' }),
})

/** The order service's own id rule (`Id`), so both refuse and accept the same ids in the same words. */
const OrderParams = z.strictObject({ id: Id })

/**
 * GET /api/orders: the order service's `GET /orders` with the same filters and paging, passed
 * through. GET /api/orders/:id: the order joined with every service's records, inbox, dead letters,
 * parked rows and actions, and its road ahead (`readOrderDetail`); 404 when the order service does not know it.
 * GET /api/search?q=: the orders an id names and where the console lands (`searchOrders`).
 */
export const orderRoutes: FastifyPluginCallbackZod<OrderRoutesOptions> = (
  app,
  { upstream, traceUrlTemplate, fleet },
  done,
) => {
  app.get('/api/orders', { schema: { hide: true, querystring: OrdersQuery } }, async (request, reply) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(request.query)) {
      if (value !== undefined) params.set(key, String(value))
    }
    const query = params.size === 0 ? '' : `?${params.toString()}`
    return replyAnswer(request, reply, 'order', await upstream.get('order', `/orders${query}`))
  })

  app.get('/api/search', { schema: { hide: true, querystring: SearchQuery } }, (request) =>
    searchOrders(upstream, request.query.q),
  )

  app.get('/api/orders/:id', { schema: { hide: true, params: OrderParams } }, async (request, reply) => {
    try {
      return await readOrderDetail(upstream, request.params.id, { traceUrlTemplate, fleet })
    } catch (error) {
      return replyUpstreamError(request, reply, error)
    }
  })
  done()
}
