/**
 * Per-key order in batches: many keys' ordered deliveries in one transaction (inbox/batch.ts), no
 * key twice. BEGIN's round trip carries one multi-row cursor move for the batch (`moveCursors`:
 * each cursor moves to its delivery's sequence when that is its next, sequence 1 makes it); the
 * handlers of the deliveries whose cursor moved run in the batch's order; COMMIT carries one
 * multi-row inbox INSERT for them and, for each `marked` cursor (it may hold deliveries, or was
 * blocked or settling), `FINISH_MOVE`. A delivery whose cursor did not move (a duplicate, one that
 * came early, a key first seen above sequence 1) is left for its own transaction (`inOrder`):
 * nothing of it was written here.
 */

import { moveCursors } from '../sql.js'
import type { ConsumedMessage, Database, TransactionClient } from '../types.js'
import { cursorOf, finishMarked, keyId, recordAtCommit } from './ordering.js'

/** A delivery of an ordered batch: its message carries `ordering`. */
export interface OrderedItem {
  message: ConsumedMessage
}

/** What an ordered batch did: the handled deliveries (`next`: the key's next one is held), and the rest. */
export interface OrderedBatchOutcome<T extends OrderedItem> {
  handled: Array<{ item: T; next: boolean }>
  /** Deliveries whose cursor did not move: each needs a transaction of its own (`inOrder`). */
  rest: T[]
}

/**
 * One transaction for `items` of `handler` (sequenced messages, no key twice), opened with
 * `beginWith`: see the file's comment. `run` runs one delivery's handler in `tx`, in `items`'
 * order. `next` is read after COMMIT. Errors: the transaction's and `run`'s (all rolled back).
 */
export async function inOrderBatch<Tx extends TransactionClient, T extends OrderedItem>(
  beginWith: NonNullable<Database<Tx>['beginWith']>,
  handler: string,
  items: readonly T[],
  run: (tx: Tx, item: T) => Promise<void>,
): Promise<OrderedBatchOutcome<T>> {
  const moves = items.map(({ message }) => {
    const { key, sequence } = message.ordering as { key: string; sequence: number }
    return { producer: message.source, key, sequence }
  })
  const { sql, commands } = moveCursors(handler, moves)
  return beginWith(sql, commands, async (tx, results) => {
    const moved = new Map<string, boolean>()
    for (const result of results)
      for (const row of result.rows as Array<{ producer: string; key: string; marked: boolean }>)
        moved.set(keyId(row.producer, row.key), row.marked)
    const outcome: OrderedBatchOutcome<T> = { handled: [], rest: [] }
    const plain: Array<{ messageId: string; handler: string }> = []
    for (const item of items) {
      const { message } = item
      const marked = moved.get(keyId(message.source, (message.ordering as { key: string }).key))
      if (marked === undefined) {
        outcome.rest.push(item)
        continue
      }
      await run(tx, item)
      const handled = { item, next: false }
      outcome.handled.push(handled)
      if (!marked) plain.push({ messageId: message.id, handler })
      else {
        const { sequence } = message.ordering as { sequence: number }
        const cursor = cursorOf(handler, message)
        await finishMarked(tx, cursor, sequence, message.id, (next) => (handled.next = next))
      }
    }
    if (plain.length > 0) await recordAtCommit(tx, plain)
    return outcome
  })
}
