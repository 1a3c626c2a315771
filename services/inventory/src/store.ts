/**
 * The inventory service's SQL for its reactions: every statement they run, written against the
 * service's transaction (`Tx`, a pg client inside BEGIN: no Prisma on the per-message path), so the
 * reactions read load -> decide -> save -> enqueue -> log. Named statements: pg prepares each once
 * per connection.
 */
import { cancellationRegister, stepStateQuery } from '@saga/cancellations'
import type { OrderLine as PricedLine } from '@saga/contracts'
import { lockOrder, type OrderLine, type StockLevels } from './domain/stock.js'
import type { Tx } from './plugins/db.js'

/**
 * This service's cancellation register (`cancellationRegister` of @saga/cancellations, table
 * `cancelled_order`): the reservation and the cancellation take the order's lock first, so of a
 * PaymentProcessed and an OrderCancelled handled at the same moment one waits for the other: a
 * reservation committed just before the cancel is released, a cancel committed just before the
 * reservation stops it. The lock is taken before any row lock, in every transaction that takes it.
 */
export const cancellations = cancellationRegister('inventory')

/**
 * What this service already knows of the order (`stepStateQuery`): whether it has reservation rows (the
 * record that its PaymentProcessed was handled) and whether it is cancelled. One round trip.
 */
export const orderState = stepStateQuery('inventory', 'reservation')

/**
 * Locks the stock rows of `lines`' skus `FOR UPDATE` in sku order (`lockOrder`, the "C" collation),
 * so two orders never deadlock, and returns what is available. An unknown sku has no entry.
 */
export async function lockStock(tx: Tx, lines: readonly OrderLine[]): Promise<StockLevels> {
  const { rows } = await tx.query<{ sku: string; available: number }>({
    name: 'inventory.lock-stock',
    text: 'SELECT sku, available FROM stock WHERE sku = ANY($1::text[]) ORDER BY sku COLLATE "C" FOR UPDATE',
    values: [lockOrder(lines)],
  })
  return new Map(rows.map((row) => [row.sku, row.available]))
}

/**
 * Moves `take` (units per sku) from available to reserved and records the order's lines (line_no
 * from 0 in `lines`' order, with their unit prices), in one statement: `lockStock` already holds every row it updates, so
 * updating them together cannot deadlock.
 */
export async function saveReservation(
  tx: Tx,
  orderId: string,
  take: readonly OrderLine[],
  lines: readonly PricedLine[],
  now: Date,
): Promise<void> {
  await tx.query({
    name: 'inventory.save-reservation',
    text: `WITH taken AS (
        UPDATE stock s SET available = s.available - t.quantity, reserved = s.reserved + t.quantity, updated_at = $3
        FROM unnest($1::text[], $2::int[]) AS t(sku, quantity) WHERE s.sku = t.sku
      )
      INSERT INTO reservation (order_id, line_no, sku, quantity, unit_price, reserved_at)
      SELECT $4::uuid, l.n - 1, l.sku, l.quantity, l.unit_price, $3
      FROM unnest($5::text[], $6::int[], $7::int[]) WITH ORDINALITY AS l(sku, quantity, unit_price, n)`,
    values: [
      take.map((t) => t.sku),
      take.map((t) => t.quantity),
      now,
      orderId,
      lines.map((l) => l.sku),
      lines.map((l) => l.quantity),
      lines.map((l) => l.unitPrice),
    ],
  })
}

/** The stock an order still holds: units per sku, and its lines as reserved (unit price 1 where unknown). */
export interface HeldStock {
  perSku: Map<string, number>
  lines: PricedLine[]
}

/** Locks the order's RESERVED rows `FOR UPDATE` and returns what they hold (empty: nothing held). */
export async function lockHeldStock(tx: Tx, orderId: string): Promise<HeldStock> {
  const { rows } = await tx.query<{ sku: string; quantity: number; unit_price: number | null }>({
    name: 'inventory.lock-held-stock',
    text: `SELECT sku, quantity, unit_price FROM reservation
      WHERE order_id = $1::uuid AND status = 'RESERVED'
      ORDER BY line_no FOR UPDATE`,
    values: [orderId],
  })
  const perSku = new Map<string, number>()
  for (const row of rows) perSku.set(row.sku, (perSku.get(row.sku) ?? 0) + row.quantity)
  // Rows reserved before the unit price was stored have none; the schema needs a positive one.
  const lines = rows.map((r) => ({ sku: r.sku, quantity: r.quantity, unitPrice: r.unit_price ?? 1 }))
  return { perSku, lines }
}

/** Gives `perSku` back to available stock and marks the order's reservation RELEASED. */
export async function saveRelease(
  tx: Tx,
  orderId: string,
  perSku: ReadonlyMap<string, number>,
  now: Date,
): Promise<void> {
  // One UPDATE per sku, in the sku order a reservation takes its row locks, so the two never deadlock
  // (a single UPDATE over all skus would lock them in whatever order its plan visits them).
  for (const sku of lockOrder([...perSku].map(([sku, quantity]) => ({ sku, quantity })))) {
    await tx.query({
      name: 'inventory.release-stock',
      text: 'UPDATE stock SET available = available + $1, reserved = reserved - $1, updated_at = $2 WHERE sku = $3',
      values: [perSku.get(sku) ?? 0, now, sku],
    })
  }
  await tx.query({
    name: 'inventory.release-reservation',
    text: `UPDATE reservation SET status = 'RELEASED', released_at = $2 WHERE order_id = $1::uuid AND status = 'RESERVED'`,
    values: [orderId, now],
  })
}
