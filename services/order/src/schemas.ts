/**
 * The HTTP shapes of the order API, in zod: they validate requests, serialise responses and make
 * the OpenAPI document. Value limits come from @saga/contracts so the API accepts exactly what the
 * OrderCreated event can carry.
 */
import {
  Currency,
  Id,
  MAX_ORDER_LINES,
  pageLimit,
  PaymentMethod,
  Quantity,
  ReasonCode,
  ShippingAddress,
  Sku,
  UnitPrice,
} from '@saga/contracts'
import { z } from 'zod'
import { WAITING_FOR } from './domain/waiting.js'

/** Largest POST /orders body in bytes: 100 lines of ~150 bytes plus the address fit with room to spare. */
export const CREATE_ORDER_BODY_LIMIT = 64 * 1024

/**
 * A shipping address, as accepted and as returned: the OpenAPI component `ShippingAddress`
 * (`.meta({ id })` names a component; each is referenced wherever it appears).
 */
const Address = ShippingAddress.strict().meta({ id: 'ShippingAddress' })

/** An order line: sku, quantity and unit price in minor units. */
const OrderLine = z
  .strictObject({ sku: Sku, quantity: Quantity, unitPrice: UnitPrice })
  .meta({ id: 'OrderLine' })

/** POST /orders body. Strict at every level: an unknown field is a 400, not silently dropped. */
export const CreateOrderBody = z
  .strictObject({
    customerId: Id,
    currency: Currency,
    items: z.array(OrderLine).min(1).max(MAX_ORDER_LINES),
    shippingAddress: Address,
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

export const OrderStatus = z.enum(['PENDING', 'CONFIRMED', 'CANCELLED']).meta({ id: 'OrderStatus' })

const Instant = z.iso.datetime()

/** The step a PENDING order waits for: the service whose fact comes next (the saga map's chain). */
export const WaitingFor = z.enum(WAITING_FOR).meta({
  id: 'WaitingFor',
  description:
    'The service a PENDING order waits for, by the facts in its timeline and the saga map: payment (no ' +
    'PaymentProcessed yet), inventory (no StockReserved yet), shipment',
})

/** An event of the saga seen for the order. */
export const OrderEventView = z
  .object({
    id: Id,
    messageId: Id.meta({ description: 'The message id of the event (the same as id)' }),
    type: z.string().meta({ example: 'payment.processed.v1' }),
    source: z.string().meta({ example: 'payment' }),
    occurredAt: Instant,
    recordedAt: Instant,
    note: z.string().nullable().meta({
      description:
        'Who cancelled the order (on order.cancelled), or that the fact came after the order ended',
      example: 'cancelled by its deadline while waiting for shipment',
    }),
  })
  .meta({ id: 'OrderEvent' })

/** An order as GET /orders lists it; money in minor units of `currency`. */
export const OrderSummary = z
  .object({
    id: Id,
    customerId: Id,
    status: OrderStatus,
    currency: Currency,
    total: z.int().meta({ description: 'Sum of quantity x unitPrice, minor units' }),
    cancellationReason: z.string().nullable(),
    failedStep: z.enum(['payment', 'stock', 'shipment']).nullable(),
    waitingFor: WaitingFor.nullable().meta({
      description: 'The step a PENDING order waits for; null once it ended',
    }),
    createdAt: Instant,
    updatedAt: Instant,
    deadlineAt: Instant.nullable().meta({
      description:
        'When a still PENDING order is cancelled with reason deadline_exceeded (ORDER_DEADLINE_MS after ' +
        'creation, by the database clock); null for orders placed before deadlines existed',
    }),
  })
  .meta({ id: 'OrderSummary' })

/** An order with its lines, address and the events seen for it (oldest first). */
export const OrderView = OrderSummary.extend({
  items: z.array(OrderLine),
  shippingAddress: Address,
  confirmedAt: Instant.nullable(),
  cancelledAt: Instant.nullable(),
  events: z.array(OrderEventView),
}).meta({ id: 'Order' })
export type OrderView = z.infer<typeof OrderView>

export const OrderParams = z.strictObject({ id: Id })

/** Most orders per page. */
export const MAX_PAGE_SIZE = 100

/**
 * A point in time in a query string: ISO 8601 with `Z` or an offset, from year 1 on (PostgreSQL
 * has no year 0, so an earlier instant would be a 500 instead of a 400).
 */
const QueryInstant = z.iso
  .datetime({ offset: true })
  .refine((text) => new Date(text).getUTCFullYear() >= 1, { error: 'must be in year 1 or later' })

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
  limit: pageLimit(MAX_PAGE_SIZE).default(20),
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a cursor returned as nextCursor' })
    .optional()
    .meta({ description: 'The nextCursor of the previous page, with the same filters' }),
})
export type ListOrdersQuery = z.infer<typeof ListOrdersQuery>

export const OrderPage = z
  .object({
    items: z.array(OrderSummary),
    /** Pass as `cursor` for the next page; null on the last page. */
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'OrderPage' })
export type OrderPage = z.infer<typeof OrderPage>

/** Width of one bucket of GET /orders/stats, seconds. */
export const STATS_BUCKET_SECONDS = 10

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

/** Orders that ended in one 10-second bucket, and how long they took from creation. */
const OrderStatsBucket = z
  .object({
    at: Instant.meta({ description: 'Start of the bucket (a multiple of 10 s since the epoch)' }),
    confirmed: z.int().meta({ description: 'Orders confirmed in the bucket' }),
    cancelled: z.int().meta({ description: 'Orders cancelled in the bucket' }),
    latencyP50Ms: z.int().nullable().meta({
      description: 'Median of created -> confirmed/cancelled over those orders, ms; null without any',
    }),
    latencyP99Ms: z.int().nullable().meta({ description: '99th percentile of the same, ms' }),
  })
  .meta({ id: 'OrderStatsBucket' })

/** GET /orders/stats: the orders now and the last window's outcomes, one snapshot of the database. */
export const OrderStats = z
  .object({
    at: Instant.meta({ description: "When the figures were read (the database's clock)" }),
    byStatus: z.object({ PENDING: z.int(), CONFIRMED: z.int(), CANCELLED: z.int() }),
    pendingByStep: z
      .object({ payment: z.int(), inventory: z.int(), shipment: z.int() })
      .meta({ description: 'PENDING orders by the step they wait for (see WaitingFor)' }),
    pendingOverdue: z.int().meta({
      description: 'PENDING orders whose deadline has passed (the deadline scheduler has not cancelled yet)',
    }),
    buckets: z.array(OrderStatsBucket).meta({
      description: 'windowSeconds / 10 buckets, oldest first; the last is the current, still filling one',
    }),
  })
  .meta({ id: 'OrderStats' })
export type OrderStats = z.infer<typeof OrderStats>
