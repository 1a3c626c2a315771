import { StockReleased, type OrderLine } from '@saga/contracts'
import { enqueue, nextEvent, type ConsumedMessage, type ReactionDeps } from '@saga/messaging'
import type { Tx } from '../plugins/db.js'
import { lockHeldStock, saveRelease } from '../store.js'

/**
 * Gives the order's reservation back to available stock, once, inside `tx`, and enqueues
 * StockReleased (caused by `message`, with `reason` and the lines as reserved); returns whether it
 * released. Exactly once whichever of ShipmentFailed and OrderCancelled come, in any order or at the
 * same moment: the order's RESERVED rows are locked and flipped to RELEASED in the same transaction
 * as the stock update, so the second finds nothing held and emits nothing.
 *
 * @param lines the order's lines when the message carries them (ShipmentFailed); otherwise the
 *   reservation rows' own lines are announced
 */
export async function releaseHeldStock(
  tx: Tx,
  message: ConsumedMessage<unknown>,
  orderId: string,
  reason: string,
  deps: ReactionDeps,
  lines?: OrderLine[],
): Promise<boolean> {
  const log = { orderId, reason, messageId: message.id, correlationId: message.correlationId }
  const held = await lockHeldStock(tx, orderId)
  if (held.perSku.size === 0) {
    deps.logger.info(log, 'no held reservation for the order; nothing to release')
    return false
  }
  const now = deps.clock()
  await saveRelease(tx, orderId, held.perSku, now)
  const payload = { orderId, lines: lines ?? held.lines, reason, releasedAt: now.toISOString() }
  await enqueue(
    tx,
    nextEvent(StockReleased, { cause: message, aggregateId: orderId, payload, occurredAt: now }),
  )
  deps.logger.info({ ...log, released: Object.fromEntries(held.perSku) }, 'stock released')
  return true
}
