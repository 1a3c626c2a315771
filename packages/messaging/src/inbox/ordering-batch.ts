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

import { deferToCommit, execute, queryRows } from '../database.js'
import { FINISH_MOVE, finishMove, INBOX_INSERT, inboxInsert, moveCursors } from '../sql.js'
import type { ConsumedMessage, Database, TransactionClient } from '../types.js'
import { cursorOf } from './ordering.js'

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

const keyOf = (producer: string, key: string): string => `${producer}\u0000${key}`

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
        moved.set(keyOf(row.producer, row.key), row.marked)
    const outcome: OrderedBatchOutcome<T> = { handled: [], rest: [] }
    const plain: Array<{ messageId: string; handler: string }> = []
    for (const item of items) {
      const { message } = item
      const marked = moved.get(keyOf(message.source, (message.ordering as { key: string }).key))
      if (marked === undefined) {
        outcome.rest.push(item)
        continue
      }
      await run(tx, item)
      const handled = { item, next: false }
      outcome.handled.push(handled)
      if (!marked) plain.push({ messageId: message.id, handler })
      else await finishMarked(tx, handler, message, (next) => (handled.next = next))
    }
    if (plain.length > 0 && !deferToCommit(tx, inboxInsert(plain), 'INSERT', () => undefined))
      for (const entry of plain) await execute(tx, INBOX_INSERT, [entry.messageId, entry.handler])
    return outcome
  })
}

/** `FINISH_MOVE` for `message`, with COMMIT where the database can; `onNext` gets whether its next is held. */
async function finishMarked(
  tx: TransactionClient,
  handler: string,
  message: ConsumedMessage,
  onNext: (next: boolean) => void,
): Promise<void> {
  const cursor = cursorOf(handler, message)
  const sequence = (message.ordering as { sequence: number }).sequence
  const read = (rows: unknown[]): void => onNext((rows[0] as { next?: boolean } | undefined)?.next === true)
  if (deferToCommit(tx, finishMove(cursor, sequence, message.id), 'SELECT', (result) => read(result.rows)))
    return
  read(await queryRows(tx, FINISH_MOVE, [...cursor, sequence, message.id]))
}
