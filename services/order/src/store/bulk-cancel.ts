/**
 * The PENDING orders a bulk cancel takes, by the orders list's filters (`OrderFilters`), in plain
 * SQL on the transaction's client: how many, and the oldest first.
 */
import { Prisma } from '../generated/prisma/client.js'
import type { Tx } from '../plugins/db.js'
import { conditions, type OrderFilters } from './views.js'

/** The filters of a bulk cancel: the orders list's, on PENDING orders only. */
export type PendingFilters = Omit<OrderFilters, 'status' | 'cancellationReason'>

const pending = (filters: PendingFilters) =>
  Prisma.join(conditions({ ...filters, status: 'PENDING' }, undefined), ' AND ')

/** How many PENDING orders match `filters`. */
export async function countPending(tx: Tx, filters: PendingFilters): Promise<number> {
  const query = Prisma.sql`SELECT count(*)::int AS count FROM orders o WHERE ${pending(filters)}`
  const { rows } = await tx.query<{ count: number }>(query.text, query.values)
  return rows[0]?.count ?? 0
}

/** The ids of the oldest `limit` PENDING orders matching `filters` (index on status, created_at, id). */
export async function oldestPending(tx: Tx, filters: PendingFilters, limit: number): Promise<string[]> {
  const query = Prisma.sql`SELECT o.id::text AS id FROM orders o WHERE ${pending(filters)}
    ORDER BY o.created_at, o.id LIMIT ${limit}::int`
  const { rows } = await tx.query<{ id: string }>(query.text, query.values)
  return rows.map((row) => row.id)
}
