import { randomUUID } from 'node:crypto'
import type { EventContract, EventPayload } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition, PrismaTransactionLike } from '@saga/messaging'

/** A consumed message as the consumer hands it to a handler: the payload parsed by its contract. */
export function consumed<C extends EventContract>(
  contract: C,
  payload: EventPayload<C>,
  options: { correlationId: string; source?: string; time?: Date },
): ConsumedMessage<EventPayload<C>> {
  return {
    id: randomUUID(),
    type: contract.type,
    source: options.source ?? 'test',
    time: options.time ?? new Date(),
    subject: options.correlationId,
    correlationId: options.correlationId,
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    routingKey: contract.routingKey,
    payload: contract.schema.parse(payload) as EventPayload<C>,
    attempt: 1,
  }
}

/** Something that opens transactions of the handler's kind (a PrismaClient). */
interface Transactional<Tx> {
  $transaction<T>(fn: (tx: Tx) => Promise<T>, options?: { timeout?: number; maxWait?: number }): Promise<T>
}

/**
 * Delivers `message` to `handler` the way messaging's inbox does: one transaction that records
 * `(message id, handler)` in inbox_message and, only when the pair is new, runs the handler in it.
 * @returns 'handled', or 'duplicate' when the inbox had already seen the pair
 */
export async function deliver<P, Tx extends PrismaTransactionLike>(
  prisma: Transactional<Tx>,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  return prisma.$transaction(
    async (tx) => {
      const fresh = await tx.$executeRawUnsafe(
        'INSERT INTO inbox_message (message_id, handler) VALUES ($1::uuid, $2) ON CONFLICT DO NOTHING',
        message.id,
        handler.name,
      )
      if (fresh === 0) return 'duplicate'
      await handler.handle(message, tx)
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
