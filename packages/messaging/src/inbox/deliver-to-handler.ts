import type { ConsumedMessage, Database, HandlerDefinition, TransactionClient } from '../types.js'
import { inInbox } from './inbox-record.js'

/**
 * Runs one validated message through the inbox for one handler, without a broker, for service tests:
 * one `database` transaction records `(message.id, handler.name)` (`inInbox`) and, only when the pair
 * is new, runs `handler.handle` in it. A handler error rolls back and is rethrown (no retry).
 * Example: `await deliverToHandler(prismaDatabase(prisma), reserveStock, message) // 'handled'`.
 * @returns 'handled', or 'duplicate' when the inbox had already recorded the pair (handler not run)
 */
export async function deliverToHandler<Tx extends TransactionClient, P>(
  database: Database<Tx>,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  const outcome = await inInbox(database, { messageId: message.id, handler: handler.name }, (tx) =>
    handler.handle(message, tx),
  )
  return outcome.fresh ? 'handled' : 'duplicate'
}
