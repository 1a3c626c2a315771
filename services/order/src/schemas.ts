/**
 * The HTTP shapes of the order API, in zod: they validate requests, serialise responses and make
 * the OpenAPI document. Value limits come from @saga/contracts so the API accepts exactly what the
 * OrderCreated event can carry.
 */
import {
  Currency,
  Id,
  MAX_ORDER_LINES,
  PaymentMethod,
  Quantity,
  ShippingAddress,
  Sku,
  UnitPrice,
} from '@saga/contracts'
import { z } from 'zod'

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

/** An event of the saga seen for the order. */
export const OrderEventView = z
  .object({
    id: Id,
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

export const ListOrdersQuery = z.strictObject({
  status: OrderStatus.optional(),
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(20),
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'must be a cursor returned as nextCursor' })
    .optional(),
})

export const OrderPage = z
  .object({
    items: z.array(OrderSummary),
    /** Pass as `cursor` for the next page; null on the last page. */
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'OrderPage' })
export type OrderPage = z.infer<typeof OrderPage>
