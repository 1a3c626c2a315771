import { execute } from '../database.js'
import type { TransactionClient } from '../types.js'

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
  const { rowCount } = await execute(
    tx,
    'INSERT INTO inbox_message (message_id, handler) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING',
    [messageId, handler],
  )
  return rowCount === 1
}
