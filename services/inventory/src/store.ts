/**
 * The inventory service's SQL for its reactions: every statement they run, written against the
 * service's transaction (`Tx`), so the reactions read load -> decide -> save -> enqueue -> log and a
 * later move of the hot path off Prisma touches this file only.
 */
import { lockOrder, type OrderLine, type StockLevels } from './domain/stock.js'
import type { Tx } from './plugins/db.js'

/** Whether the order already has reservation rows (the record that its PaymentProcessed was handled). */
export async function hasReservations(tx: Tx, orderId: string): Promise<boolean> {
  return (await tx.reservation.count({ where: { orderId } })) > 0
}

/**
 * Locks the stock rows of `lines`' skus `FOR UPDATE` in sku order (`lockOrder`, the "C" collation),
 * so two orders never deadlock, and returns what is available. An unknown sku has no entry.
 */
export async function lockStock(tx: Tx, lines: readonly OrderLine[]): Promise<StockLevels> {
  const rows = await tx.$queryRaw<{ sku: string; available: number }[]>`
    SELECT sku, available FROM stock WHERE sku = ANY(${lockOrder(lines)}::text[]) ORDER BY sku COLLATE "C" FOR UPDATE`
  return new Map(rows.map((row) => [row.sku, row.available]))
}

/** Moves `take` (units per sku, in lock order) from available to reserved and records the order's lines. */
export async function saveReservation(
  tx: Tx,
  orderId: string,
  take: readonly OrderLine[],
  lines: readonly OrderLine[],
  now: Date,
): Promise<void> {
  for (const { sku, quantity } of take) {
    await tx.$executeRaw`
      UPDATE stock SET available = available - ${quantity}, reserved = reserved + ${quantity}, updated_at = ${now}
      WHERE sku = ${sku}`
  }
  await tx.reservation.createMany({
    data: lines.map((line, lineNo) => ({
      orderId,
      lineNo,
      sku: line.sku,
      quantity: line.quantity,
      reservedAt: now,
    })),
  })
}

/** Locks the order's RESERVED rows `FOR UPDATE` and returns the units held per sku (empty: nothing held). */
export async function lockHeldStock(tx: Tx, orderId: string): Promise<Map<string, number>> {
  const held = await tx.$queryRaw<{ sku: string; quantity: number }[]>`
    SELECT sku, quantity FROM reservation
    WHERE order_id = ${orderId}::uuid AND status = 'RESERVED'
    ORDER BY line_no FOR UPDATE`
  const perSku = new Map<string, number>()
  for (const row of held) perSku.set(row.sku, (perSku.get(row.sku) ?? 0) + row.quantity)
  return perSku
}

/** Gives `perSku` back to available stock and marks the order's reservation RELEASED. */
export async function saveRelease(
  tx: Tx,
  orderId: string,
  perSku: ReadonlyMap<string, number>,
  now: Date,
): Promise<void> {
  // Same sku order as a reservation takes its row locks, so the two never deadlock.
  for (const sku of lockOrder([...perSku].map(([sku, quantity]) => ({ sku, quantity })))) {
    const quantity = perSku.get(sku) ?? 0
    await tx.$executeRaw`
      UPDATE stock SET available = available + ${quantity}, reserved = reserved - ${quantity}, updated_at = ${now}
      WHERE sku = ${sku}`
  }
  await tx.reservation.updateMany({
    where: { orderId, status: 'RESERVED' },
    data: { status: 'RELEASED', releasedAt: now },
  })
}
