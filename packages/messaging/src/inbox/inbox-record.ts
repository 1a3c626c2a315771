import { execute } from '../database.js'
import { INBOX_INSERT } from '../sql.js'
import type { Database, InboxEntry, InboxOutcome, TransactionClient } from '../types.js'

/**
 * Records that `handler` takes message `messageId` in the handler's transaction; false when the pair
 * is already there (a duplicate). A second transaction inserting the same pair blocks on the
 * primary key until the first ends, so concurrent deliveries of one message have one effect.
 */
export async function recordInbox(
  tx: TransactionClient,
  messageId: string,
  handler: string,
): Promise<boolean> {
  const { rowCount } = await execute(tx, INBOX_INSERT, [messageId, handler])
  return rowCount === 1
}

/**
 * Runs `fn` in one inbox transaction of `database` for `entry`, only when the pair is new;
 * `{ fresh: false }` for a duplicate. Uses `inboxTransaction` when there is one, else `recordInbox`
 * first in `transaction`. Errors: what the transaction or `fn` throws (everything rolled back).
 */
export function inInbox<Tx extends TransactionClient, T>(
  database: Database<Tx>,
  entry: InboxEntry,
  fn: (tx: Tx) => Promise<T>,
): Promise<InboxOutcome<T>> {
  if (database.inboxTransaction) return database.inboxTransaction(entry, fn)
  return database.transaction(async (tx): Promise<InboxOutcome<T>> => {
    if (!(await recordInbox(tx, entry.messageId, entry.handler))) return { fresh: false }
    return { fresh: true, value: await fn(tx) }
  })
}
