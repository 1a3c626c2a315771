/**
 * The order API's reads, through Prisma outside any transaction: an order with its lines and
 * timeline, a page of orders, and the cursor that pages them.
 */
import type { Prisma, PrismaClient } from '../generated/prisma/client.js'
import type { OrderPage, OrderView } from '../schemas.js'
import { timelineQuery } from './timeline.js'

type SummaryRow = Prisma.OrderGetPayload<object>
const detail = {
  include: { lines: { orderBy: { lineNo: 'asc' } }, events: timelineQuery },
} satisfies Prisma.OrderDefaultArgs
type DetailRow = Prisma.OrderGetPayload<typeof detail>

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null)

const summary = (row: SummaryRow) => ({
  id: row.id,
  customerId: row.customerId,
  status: row.status,
  currency: row.currency as OrderView['currency'],
  total: Number(row.totalAmount),
  cancellationReason: row.cancellationReason,
  failedStep: row.failedStep as OrderView['failedStep'],
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
  deadlineAt: iso(row.deadlineAt),
})

/** Maps a stored order with lines and events to the API shape. */
export const toOrderView = (row: DetailRow): OrderView => ({
  ...summary(row),
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
    type: event.type,
    source: event.source,
    occurredAt: event.occurredAt.toISOString(),
    recordedAt: event.recordedAt.toISOString(),
    note: event.note,
  })),
})

/**
 * A 201 body stored under an idempotency key, as the API shows it now: a body stored before
 * deadlines existed lacks `deadlineAt` and the events' `note`, which the response schema requires.
 */
export function storedOrderView(body: unknown): OrderView {
  const stored = body as OrderView
  return {
    ...stored,
    deadlineAt: stored.deadlineAt ?? null,
    events: stored.events.map((event) => ({ ...event, note: event.note ?? null })),
  }
}

/** The order with its lines and timeline, or undefined. */
export async function findOrderView(db: PrismaClient, id: string): Promise<OrderView | undefined> {
  const row = await db.order.findUnique({ where: { id }, ...detail })
  return row ? toOrderView(row) : undefined
}

/** Position after which the next page starts: the last row's (createdAt, id), newest first. */
interface Cursor {
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

/**
 * One page of orders, newest first, optionally of one status. Keyset paging on (created_at, id), so
 * pages stay stable while new orders arrive and deep pages cost no OFFSET scan.
 */
export async function listOrders(
  db: PrismaClient,
  query: { status?: OrderView['status'] | undefined; limit: number; after?: Cursor | undefined },
): Promise<OrderPage> {
  const { after } = query
  const rows = await db.order.findMany({
    where: {
      ...(query.status ? { status: query.status } : {}),
      ...(after
        ? {
            OR: [
              { createdAt: { lt: after.createdAt } },
              { createdAt: after.createdAt, id: { lt: after.id } },
            ],
          }
        : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  })
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return {
    items: page.map(summary),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last) : null,
  }
}
