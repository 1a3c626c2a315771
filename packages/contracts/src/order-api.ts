/**
 * The order service's HTTP answers about orders (`GET /orders`, `/orders/:id`, `/orders/stats`) in
 * zod: the order service serialises its responses and makes its OpenAPI document with them, and the
 * saga console types what it reads with them, so both ends have one definition. Requests (bodies,
 * queries, headers) stay the order service's own (`services/order/src/schemas.ts`).
 *
 * The schemas carry no OpenAPI component id (`.meta({ id })`): the order service names them
 * (`ORDER_API_COMPONENTS`) where it builds its document, so the components' order in it follows that
 * module alone, not which module happened to import this package first.
 */
import { z } from 'zod'
import { FailedStep } from './order.js'
import { ORDER_STATUSES, WAITING_FOR } from './order-states.js'
import { Currency, Id, Quantity, ShippingAddress, Sku, UnitPrice } from './values.js'

export * from './order-states.js'

/** An instant as the order API writes it: ISO 8601 in UTC (`Z`). */
const Instant = z.iso.datetime()

/** A shipping address, as accepted and as returned. */
export const ShippingAddressView = ShippingAddress.strict()

/** An order line: sku, quantity and unit price in minor units. */
export const OrderLineView = z.strictObject({ sku: Sku, quantity: Quantity, unitPrice: UnitPrice })

/** An order's status (`ORDER_STATUSES`). */
export const OrderStatus = z.enum(ORDER_STATUSES)
export type OrderStatus = z.infer<typeof OrderStatus>

/** The step a PENDING order waits for: the service whose fact comes next (the saga map's chain). */
export const WaitingFor = z.enum(WAITING_FOR).meta({
  description:
    'The service a PENDING order waits for, by the facts in its timeline and the saga map: payment (no ' +
    'PaymentProcessed yet), inventory (no StockReserved yet), shipment',
})
export type WaitingFor = z.infer<typeof WaitingFor>

/** An event of the saga seen for the order. */
export const OrderEventView = z.object({
  id: Id,
  messageId: Id.meta({ description: 'The message id of the event (the same as id)' }),
  type: z.string().meta({ example: 'payment.processed.v1' }),
  source: z.string().meta({ example: 'payment' }),
  occurredAt: Instant,
  recordedAt: Instant,
  note: z.string().nullable().meta({
    description: 'Who cancelled the order (on order.cancelled), or that the fact came after the order ended',
    example: 'cancelled by its deadline while waiting for shipment',
  }),
})
export type OrderEventView = z.infer<typeof OrderEventView>

/** An order as GET /orders lists it; money in minor units of `currency`. */
export const OrderSummary = z.object({
  id: Id,
  customerId: Id,
  status: OrderStatus,
  currency: Currency,
  total: z.int().meta({ description: 'Sum of quantity x unitPrice, minor units' }),
  cancellationReason: z.string().nullable(),
  failedStep: FailedStep.nullable(),
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
export type OrderSummary = z.infer<typeof OrderSummary>

/** An order with its lines, address and the events seen for it (oldest first). */
export const OrderView = OrderSummary.extend({
  items: z.array(OrderLineView),
  shippingAddress: ShippingAddressView,
  confirmedAt: Instant.nullable(),
  cancelledAt: Instant.nullable(),
  events: z.array(OrderEventView),
})
export type OrderView = z.infer<typeof OrderView>

/** A page of GET /orders. */
export const OrderPage = z.object({
  items: z.array(OrderSummary),
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
})
export type OrderPage = z.infer<typeof OrderPage>

/** What kind of id `GET /orders/lookup` found a text to be, and where. */
export const LOOKUP_KINDS = ['order', 'idPrefix', 'customer', 'idempotencyKey', 'message'] as const
export type LookupKind = (typeof LOOKUP_KINDS)[number]

/** One order `GET /orders/lookup` found for a text, and as what kind of id. */
export const OrderLookupMatch = z.object({
  kind: z.enum(LOOKUP_KINDS).meta({
    description:
      "order: the order's id; idPrefix: the start of its id; customer: its customer's id; idempotencyKey: " +
      'the Idempotency-Key it was placed with; message: the message id of a fact in its timeline',
  }),
  orderId: Id,
})
export type OrderLookupMatch = z.infer<typeof OrderLookupMatch>

/** GET /orders/lookup: the orders a text names, at most two per kind (two: more than one exists). */
export const OrderLookup = z.object({ matches: z.array(OrderLookupMatch) })
export type OrderLookup = z.infer<typeof OrderLookup>

/** Width of one bucket of GET /orders/stats, seconds. */
export const STATS_BUCKET_SECONDS = 10

/** Orders that ended in one 10-second bucket, and how long they took from creation. */
export const OrderStatsBucket = z.object({
  at: Instant.meta({ description: 'Start of the bucket (a multiple of 10 s since the epoch)' }),
  confirmed: z.int().meta({ description: 'Orders confirmed in the bucket' }),
  cancelled: z.int().meta({ description: 'Orders cancelled in the bucket' }),
  latencyP50Ms: z.int().nullable().meta({
    description: 'Median of created -> confirmed/cancelled over those orders, ms; null without any',
  }),
  latencyP99Ms: z.int().nullable().meta({ description: '99th percentile of the same, ms' }),
})
export type OrderStatsBucket = z.infer<typeof OrderStatsBucket>

/** GET /orders/stats: the orders now and the last window's outcomes, one snapshot of the database. */
export const OrderStats = z.object({
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
export type OrderStats = z.infer<typeof OrderStats>

/**
 * The OpenAPI component name of each schema above that has one, in the order the order service's
 * document lists them: it registers them (`z.globalRegistry`) where it builds the document.
 */
export const ORDER_API_COMPONENTS: readonly (readonly [z.ZodType, string])[] = [
  [ShippingAddressView, 'ShippingAddress'],
  [OrderLineView, 'OrderLine'],
  [OrderStatus, 'OrderStatus'],
  [WaitingFor, 'WaitingFor'],
  [OrderEventView, 'OrderEvent'],
  [OrderSummary, 'OrderSummary'],
  [OrderView, 'Order'],
  [OrderPage, 'OrderPage'],
  [OrderLookupMatch, 'OrderLookupMatch'],
  [OrderLookup, 'OrderLookup'],
  [OrderStatsBucket, 'OrderStatsBucket'],
  [OrderStats, 'OrderStats'],
]
