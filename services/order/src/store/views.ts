/**
 * The order API's reads, through Prisma outside any transaction: an order with its lines and
 * timeline, a filtered page of orders, and the cursor that pages them.
 */
import { waitingFor, type WaitingFor } from '../domain/waiting.js'
import { Prisma, type PrismaClient } from '../generated/prisma/client.js'
import type { OrderPage, OrderView } from '../schemas.js'
import { prefixRange } from './search.js'
import { timelineQuery } from './timeline.js'
import { asWaitingFor, waitingForSql } from './waiting.js'

/** The order columns a summary shows. */
type SummaryRow = Pick<
  Prisma.OrderGetPayload<object>,
  | 'id'
  | 'customerId'
  | 'status'
  | 'currency'
  | 'totalAmount'
  | 'cancellationReason'
  | 'failedStep'
  | 'createdAt'
  | 'updatedAt'
  | 'deadlineAt'
>
const detail = {
  include: { lines: { orderBy: { lineNo: 'asc' } }, events: timelineQuery },
} satisfies Prisma.OrderDefaultArgs
type DetailRow = Prisma.OrderGetPayload<typeof detail>

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null)

const summary = (row: SummaryRow, waiting: WaitingFor | null) => ({
  id: row.id,
  customerId: row.customerId,
  status: row.status,
  currency: row.currency as OrderView['currency'],
  total: Number(row.totalAmount),
  cancellationReason: row.cancellationReason,
  failedStep: row.failedStep as OrderView['failedStep'],
  waitingFor: row.status === 'PENDING' ? waiting : null,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
  deadlineAt: iso(row.deadlineAt),
})

/** Maps a stored order with lines and events to the API shape. */
export const toOrderView = (row: DetailRow): OrderView => ({
  ...summary(row, waitingFor(row.events.map((event) => event.type))),
  items: row.lines.map((line) => ({ sku: line.sku, quantity: line.quantity, unitPrice: line.unitPrice })),
  shippingAddress: {
    name: row.shipName,
    line1: row.shipLine1,
    city: row.shipCity,
    postalCode: row.shipPostalCode,
    country: row.shipCountry as OrderView['shippingAddress']['country'],
  },
  confirmedAt: iso(row.confirmedAt),
  cancelledAt: iso(row.cancelledAt),
  events: row.events.map((event) => ({
    id: event.messageId,
    messageId: event.messageId,
    type: event.type,
    source: event.source,
    occurredAt: event.occurredAt.toISOString(),
    recordedAt: event.recordedAt.toISOString(),
    note: event.note,
  })),
})

/**
 * A 201 body stored under an idempotency key, as the API shows it now: a body stored before
 * deadlines existed lacks `deadlineAt` and the events' `note`, one stored before `waitingFor` and
 * the events' `messageId` existed lacks those (a 201 shows a new order, which waits for its first
 * step; `messageId` is the event's `id`); the response schema requires them.
 */
export function storedOrderView(body: unknown): OrderView {
  const stored = body as OrderView
  return {
    ...stored,
    deadlineAt: stored.deadlineAt ?? null,
    waitingFor: stored.waitingFor === undefined ? waitingFor([]) : stored.waitingFor,
    events: stored.events.map((event) => ({
      ...event,
      messageId: event.messageId ?? event.id,
      note: event.note ?? null,
    })),
  }
}

/** The order with its lines and timeline, or undefined. */
export async function findOrderView(db: PrismaClient, id: string): Promise<OrderView | undefined> {
  const row = await db.order.findUnique({ where: { id }, ...detail })
  return row ? toOrderView(row) : undefined
}

/** Position after which the next page starts: the last row's (createdAt, id), newest first. */
export interface Cursor {
  createdAt: Date
  id: string
}

/** Opaque base64url of `<createdAt ISO>|<id>`. */
export const encodeCursor = (cursor: Cursor): string =>
  Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`).toString('base64url')

/**
 * The cursor encoded by `encodeCursor`, or undefined when `text` is not one. Only exact round trips
 * pass, so a crafted cursor cannot carry a time PostgreSQL rejects (a 500 instead of a 400).
 */
export function decodeCursor(text: string): Cursor | undefined {
  const [at, id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('|')
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
  if (rest.length > 0 || at === undefined || id === undefined || !uuid.test(id)) return undefined
  const createdAt = new Date(at)
  if (!/^\d{4}-/.test(at) || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at)
    return undefined
  return { createdAt, id }
}

/** What GET /orders filters on; every filter given must hold (AND). */
export interface OrderFilters {
  status?: OrderView['status'] | undefined
  /** PENDING orders waiting for this step. */
  waitingFor?: WaitingFor | undefined
  cancellationReason?: string | undefined
  /** created_at >= this. */
  placedAfter?: Date | undefined
  /** created_at < this. */
  placedBefore?: Date | undefined
  /** PENDING orders with deadline_at < this. */
  deadlineBefore?: Date | undefined
  /** This customer's orders. */
  customerId?: string | undefined
  /** Orders whose id starts with these hex digits (dashes ignored). */
  idPrefix?: string | undefined
}

const at = (date: Date): Prisma.Sql => Prisma.sql`${date.toISOString()}::timestamptz`

/** The WHERE conditions of `filters` and of the page's start, each on an indexed column or on PENDING rows. */
export function conditions(filters: OrderFilters, after: Cursor | undefined): Prisma.Sql[] {
  const where: Prisma.Sql[] = []
  if (filters.status) where.push(Prisma.sql`o.status = ${filters.status}::"OrderStatus"`)
  if (filters.waitingFor || filters.deadlineBefore) where.push(Prisma.sql`o.status = 'PENDING'`)
  if (filters.waitingFor) where.push(Prisma.sql`${waitingForSql('o')} = ${filters.waitingFor}`)
  if (filters.deadlineBefore) where.push(Prisma.sql`o.deadline_at < ${at(filters.deadlineBefore)}`)
  if (filters.cancellationReason)
    where.push(Prisma.sql`o.cancellation_reason = ${filters.cancellationReason}`)
  if (filters.placedAfter) where.push(Prisma.sql`o.created_at >= ${at(filters.placedAfter)}`)
  if (filters.placedBefore) where.push(Prisma.sql`o.created_at < ${at(filters.placedBefore)}`)
  if (filters.customerId) where.push(Prisma.sql`o.customer_id = ${filters.customerId}::uuid`)
  if (filters.idPrefix) {
    const { first, last } = prefixRange(filters.idPrefix)
    where.push(Prisma.sql`o.id BETWEEN ${first}::uuid AND ${last}::uuid`)
  }
  // A row comparison, so the index on (…, created_at, id) bounds the scan where the page starts.
  if (after) where.push(Prisma.sql`(o.created_at, o.id) < (${at(after.createdAt)}, ${after.id}::uuid)`)
  return where.length > 0 ? where : [Prisma.sql`TRUE`]
}

/**
 * One page of orders matching `filters`, newest first. Keyset paging on (created_at, id), so pages
 * stay stable while new orders arrive and deep pages cost no OFFSET scan; a cursor is a position,
 * so the next page is asked for with the same filters. The plans (EXPLAIN on 100,000 orders, bench/console.ts):
 * no filter, placedAfter/Before: `orders_created_at_id_idx` backwards; status: `orders_status_created_at_id_idx`;
 * cancellationReason: `orders_cancellation_reason_created_at_id_idx`; customerId:
 * `orders_customer_id_created_at_id_idx`; idPrefix: a range of the primary key; waitingFor and deadlineBefore: the
 * PENDING rows of the status index, each with one timeline probe (waitingFor).
 */
export async function listOrders(
  db: PrismaClient,
  query: OrderFilters & { limit: number; after?: Cursor | undefined },
): Promise<OrderPage> {
  const rows = await db.$queryRaw<Array<SummaryRow & { waitingFor: string | null }>>(listOrdersSql(query))
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return {
    items: page.map((row) => summary(row, asWaitingFor(row.waitingFor))),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null,
  }
}

/** The statement of `listOrders` (one row more than `limit`, to know whether a next page exists), for EXPLAIN. */
export const listOrdersSql = (
  query: OrderFilters & { limit: number; after?: Cursor | undefined },
) => Prisma.sql`
  SELECT o.id::text, o.customer_id::text AS "customerId", o.status::text, o.currency,
    o.total_amount AS "totalAmount", o.cancellation_reason AS "cancellationReason", o.failed_step AS "failedStep",
    o.created_at AS "createdAt", o.updated_at AS "updatedAt", o.deadline_at AS "deadlineAt",
    CASE WHEN o.status = 'PENDING' THEN ${waitingForSql('o')} END AS "waitingFor"
  FROM orders o
  WHERE ${Prisma.join(conditions(query, query.after), ' AND ')}
  ORDER BY o.created_at DESC, o.id DESC
  LIMIT ${query.limit + 1}::int`
