import type { ConsumedMessage, Database, HandlerDefinition, TransactionClient } from '../types.js'
import { inInbox } from './inbox-record.js'

/**
 * Runs one already-validated message through the inbox for one handler, without a broker: one
 * `database` transaction that records `(message.id, handler.name)` in inbox_message (`inInbox`,
 * the consumer's own) and, only when the pair is new, runs `handler.handle` in it. A handler
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
  const outcome = await inInbox(database, { messageId: message.id, handler: handler.name }, (tx) =>
    handler.handle(message, tx),
  )
  return outcome.fresh ? 'handled' : 'duplicate'
}
