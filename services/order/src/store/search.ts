/**
 * What finds an order from an id someone holds: the range of ids a prefix spans (a range of the
 * primary key, no index of its own), and the look-up of a text as every kind of id the order
 * service keeps, each on an index (`lookupOrders`).
 */
import type { LookupKind, OrderLookup } from '@saga/contracts'
import { Prisma, type PrismaClient } from '../generated/prisma/client.js'

/** A UUID as PostgreSQL prints it, from 32 hex digits. */
const asUuid = (hex: string): string =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`

/**
 * The first and last UUID that start with the hex digits of `prefix` (dashes ignored, any case), so
 * `id BETWEEN first AND last` is a range scan of the primary key.
 * @throws Error when `prefix` holds no hex digit, another character, or more than 32 digits
 */
export function prefixRange(prefix: string): { first: string; last: string } {
  const hex = prefix.replaceAll('-', '').toLowerCase()
  if (!/^[0-9a-f]{1,32}$/.test(hex)) throw new Error(`Not the start of a UUID: ${prefix}`)
  return { first: asUuid(hex.padEnd(32, '0')), last: asUuid(hex.padEnd(32, 'f')) }
}

/** Fewest hex digits `lookupOrders` takes as the start of an order id (4: one in 65,536 ids). */
export const MIN_PREFIX_DIGITS = 4

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * The orders `text` names, at most two per kind (a second one says "more than one": the caller
 * lists them with a filter instead). Each kind is one probe of an index: an order id (the primary
 * key), the start of one (a range of it), a customer id (`orders_customer_id_created_at_id_idx`,
 * newest first), an Idempotency-Key (`idempotency_keys_pkey`), a fact's message id
 * (`order_events_pkey`). A text that cannot be a UUID or its start is only tried as a key.
 */
export async function lookupOrders(db: PrismaClient, text: string): Promise<OrderLookup> {
  const uuid = UUID.test(text) ? text.toLowerCase() : null
  const digits = text.replaceAll('-', '')
  const range =
    uuid === null && /^[0-9a-f-]+$/i.test(text) && digits.length >= MIN_PREFIX_DIGITS && digits.length <= 32
      ? prefixRange(text)
      : null
  const probes: Prisma.Sql[] = [
    Prisma.sql`(SELECT 'idempotencyKey' AS kind, order_id::text AS "orderId" FROM idempotency_keys WHERE key = ${text})`,
  ]
  if (uuid !== null) {
    probes.push(
      Prisma.sql`(SELECT 'order', id::text FROM orders WHERE id = ${uuid}::uuid)`,
      Prisma.sql`(SELECT 'customer', id::text FROM orders WHERE customer_id = ${uuid}::uuid
        ORDER BY created_at DESC, id DESC LIMIT 2)`,
      Prisma.sql`(SELECT 'message', order_id::text FROM order_events WHERE message_id = ${uuid}::uuid)`,
    )
  }
  if (range !== null) {
    probes.push(
      Prisma.sql`(SELECT 'idPrefix', id::text FROM orders
        WHERE id BETWEEN ${range.first}::uuid AND ${range.last}::uuid ORDER BY id LIMIT 2)`,
    )
  }
  const rows = await db.$queryRaw<Array<{ kind: LookupKind; orderId: string }>>(
    Prisma.sql`${Prisma.join(probes, ' UNION ALL ')}`,
  )
  return { matches: rows.map((row) => ({ kind: row.kind, orderId: row.orderId })) }
}
