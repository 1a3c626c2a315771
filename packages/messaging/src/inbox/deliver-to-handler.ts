import type { ConsumedMessage, Database, HandlerDefinition, TransactionClient } from '../types.js'
import { recordInbox } from './inbox-record.js'

/**
 * Runs one already-validated message through the inbox for one handler, without a broker: one
 * `database` transaction that records `(message.id, handler.name)` in inbox_message (`recordInbox`,
 * the consumer's own INSERT) and, only when the pair is new, runs `handler.handle` in it. A handler
 * error rolls the inbox row back too and is rethrown (no retry, no dead-lettering: that is the
 * consumer's job). Meant for service tests that exercise a reaction the way the consumer would.
 * Example: `await deliverToHandler(prismaDatabase(prisma), reserveStock, message) // 'handled'`.
 * @returns 'handled', or 'duplicate' when the inbox had already recorded the pair (handler not run)
 */
export async function deliverToHandler<Tx extends TransactionClient, P>(
  database: Database<Tx>,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  return database.transaction(async (tx) => {
    if (!(await recordInbox(tx, message.id, handler.name))) return 'duplicate' as const
    await handler.handle(message, tx)
    return 'handled' as const
  })
}
