/**
 * The HTTP shapes of the order API, in zod: they validate requests, serialise responses and make
 * the OpenAPI document. The answers' shapes are @saga/contracts' (`order-api.ts`, re-exported here),
 * which the console reads them with. Value limits come from @saga/contracts so the API accepts
 * exactly what the OrderCreated event can carry.
 */
import {
  Currency,
  Id,
  MAX_ORDER_LINES,
  ORDER_API_COMPONENTS,
  OrderLineView,
  OrderStatus,
  pageLimit,
  PaymentMethod,
  ReasonCode,
  ShippingAddressView,
  STATS_BUCKET_SECONDS,
  WaitingFor,
} from '@saga/contracts'
import { z } from 'zod'

export {
  OrderEventView,
  OrderLookup,
  OrderPage,
  OrderStats,
  OrderStatus,
  OrderSummary,
  OrderView,
  STATS_BUCKET_SECONDS,
  WaitingFor,
} from '@saga/contracts'

/**
 * Names a schema of @saga/contracts' order answers as its OpenAPI component (`z.globalRegistry`,
 * which `.meta({ id })` writes too), here rather than in the package: the components are listed in
 * the order this module names them, whichever module imported the package first.
 */
function nameComponents(ids: readonly string[]): void {
  for (const [schema, id] of ORDER_API_COMPONENTS) {
    if (ids.includes(id)) z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id })
  }
}

// An address and a line, as accepted and as returned: referenced by the request and the answers.
nameComponents(['ShippingAddress', 'OrderLine'])

/** Largest POST /orders body in bytes: 100 lines of ~150 bytes plus the address fit with room to spare. */
export const CREATE_ORDER_BODY_LIMIT = 64 * 1024

/** POST /orders body. Strict at every level: an unknown field is a 400, not silently dropped. */
export const CreateOrderBody = z
  .strictObject({
    customerId: Id,
    currency: Currency,
    items: z.array(OrderLineView).min(1).max(MAX_ORDER_LINES),
    shippingAddress: ShippingAddressView,
    paymentMethod: PaymentMethod,
  })
  .meta({ id: 'CreateOrderRequest' })
export type CreateOrderBody = z.infer<typeof CreateOrderBody>

/** Printable ASCII, 1-255 characters (a UUID is typical), as the IETF draft on the header suggests. */
export const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/, { error: 'must be printable ASCII' })

export const CreateOrderHeaders = z.object({ 'idempotency-key': IdempotencyKey.optional() })

// The answers' components, after the request's.
nameComponents(['OrderStatus', 'WaitingFor', 'OrderEvent', 'OrderSummary', 'Order', 'OrderPage'])

export const OrderParams = z.strictObject({ id: Id })

/** Most orders per page. */
export const MAX_PAGE_SIZE = 100

/**
 * A point in time in a query string: ISO 8601 with `Z` or an offset, from year 1 on (PostgreSQL
 * has no year 0, so an earlier instant would be a 500 instead of a 400).
 */
export const QueryInstant = z.iso
  .datetime({ offset: true })
  .refine((text) => new Date(text).getUTCFullYear() >= 1, { error: 'must be in year 1 or later' })

/** The start of an order id: 1-32 hex digits, dashes where a UUID has them or anywhere (ignored). */
export const IdPrefix = z
  .string()
  .max(36)
  .regex(/^[0-9a-fA-F-]*[0-9a-fA-F][0-9a-fA-F-]*$/, { error: 'must be hex digits (dashes allowed)' })
  .refine((text) => text.replaceAll('-', '').length <= 32, { error: 'must be at most 32 hex digits' })
  .meta({ description: 'Only orders whose id starts with these hex digits (dashes ignored)' })

export const ListOrdersQuery = z.strictObject({
  status: OrderStatus.optional(),
  waitingFor: WaitingFor.optional().meta({
    description: 'Only PENDING orders waiting for this step',
  }),
  cancellationReason: ReasonCode.optional().meta({
    description:
      "Only orders cancelled with this reason (a step's reason code, deadline_exceeded, customer_requested, operator_requested)",
  }),
  placedAfter: QueryInstant.optional().meta({ description: 'Only orders created at or after this instant' }),
  placedBefore: QueryInstant.optional().meta({ description: 'Only orders created before this instant' }),
  deadlineBefore: QueryInstant.optional().meta({
    description: 'Only PENDING orders whose deadline passes before this instant (now: the overdue ones)',
  }),
  customerId: Id.optional().meta({ description: "Only this customer's orders" }),
  idPrefix: IdPrefix.optional(),
  limit: pageLimit(MAX_PAGE_SIZE).default(20),
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a cursor returned as nextCursor' })
    .optional()
    .meta({ description: 'The nextCursor of the previous page, with the same filters' }),
})
export type ListOrdersQuery = z.infer<typeof ListOrdersQuery>

/** GET /orders/lookup: any text someone holds for an order (an id, its start, a key). */
export const OrderLookupQuery = z.strictObject({
  // Printable ASCII up to 255 characters, as an Idempotency-Key: every id it may be fits that rule.
  id: IdempotencyKey.meta({
    description:
      'An order id or its start (4 hex digits at least), a customer id, an Idempotency-Key, or the message id ' +
      "of a fact in an order's timeline",
  }),
})

nameComponents(['OrderLookupMatch', 'OrderLookup'])

nameComponents(['OrderStatsBucket', 'OrderStats'])

export const OrderStatsQuery = z.strictObject({
  windowSeconds: z.coerce
    .number()
    .int()
    .min(STATS_BUCKET_SECONDS)
    .max(3600)
    .multipleOf(STATS_BUCKET_SECONDS)
    .default(300)
    .meta({ description: 'How far back the buckets reach, seconds: a multiple of 10 up to 3600' }),
})
