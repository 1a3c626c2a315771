import { execute } from '../database.js'
import { INBOX_INSERT } from '../sql.js'
import type { Database, InboxEntry, InboxOutcome, TransactionClient } from '../types.js'

/**
 * Records that `handler` takes message `messageId`, inside the handler's transaction. Returns
 * false when the pair is already recorded: a duplicate, whose effect is already committed.
 *
 * Two transactions inserting the same pair at once: the second blocks on the primary key until the
 * first ends, then gets 0 rows if it committed, or inserts if it rolled back. So concurrent
 * deliveries of one message (two consumers, a redelivery racing a slow commit) have one effect.
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
 * Runs `fn` in one inbox transaction of `database` for `entry`: records the pair and, only when it
 * is new, runs `fn` in the same transaction; `{ fresh: false }` (fn not run) for a duplicate. Uses
 * the database's `inboxTransaction` when it has one (pgDatabase: BEGIN and the inbox INSERT in one
 * round trip), else `recordInbox` as the first statement of `transaction`. Errors: whatever the
 * transaction or `fn` throws (everything rolled back).
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
