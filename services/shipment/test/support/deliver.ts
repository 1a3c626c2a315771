import { randomUUID } from 'node:crypto'
import type { EventContract, EventPayload } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition, TransactionClient } from '@saga/messaging'
import type { PrismaClient } from '../../src/generated/prisma/client.js'

/** A consumed message as the consumer hands it to a handler: the payload parsed by its contract. */
export function consumed<C extends EventContract>(
  contract: C,
  payload: EventPayload<C>,
  correlationId: string,
): ConsumedMessage<EventPayload<C>> {
  return {
    id: randomUUID(),
    type: contract.type,
    source: 'test',
    time: new Date(),
    subject: correlationId,
    correlationId,
    routingKey: contract.routingKey,
    payload: contract.schema.parse(payload) as EventPayload<C>,
    attempt: 1,
  }
}

/**
 * Delivers `message` to `handler` the way the inbox does: one transaction that records
 * `(message id, handler)` and, only when the pair is new, runs the handler in it.
 *
 * @returns 'handled', or 'duplicate' when the inbox had already seen the pair
 */
export async function deliver<P, Tx extends TransactionClient>(
  prisma: PrismaClient,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  return prisma.$transaction(
    async (tx) => {
      const fresh = await tx.$executeRaw`
        INSERT INTO inbox_message (message_id, handler) VALUES (${message.id}::uuid, ${handler.name})
        ON CONFLICT DO NOTHING`
      if (fresh === 0) return 'duplicate'
      await handler.handle(message, tx as unknown as Tx)
      return 'handled'
    },
    { timeout: 20_000, maxWait: 20_000 },
  )
}

/** Collects log lines so tests can assert what a handler said. */
export function memoryLogger() {
  const lines: { level: string; obj: object; msg?: string | undefined }[] = []
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}
