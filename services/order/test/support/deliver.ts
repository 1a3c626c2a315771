import { randomUUID } from 'node:crypto'
import type { EventContract, EventPayload } from '@saga/contracts'
import {
  deliverToHandler,
  prismaDatabase,
  type ConsumedMessage,
  type HandlerDefinition,
  type PrismaClientLike,
  type PrismaTransactionLike,
} from '@saga/messaging'

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

/** Transaction limits for a test delivery, ms: generous, the service tests share a 2-core machine. */
const TEST_TRANSACTION = { timeoutMs: 20_000, maxWaitMs: 20_000 }

/**
 * Delivers `message` to `handler` through messaging's real inbox (`deliverToHandler`): one
 * transaction that records `(message id, handler)` in inbox_message and, only when the pair is new,
 * runs the handler in it. A handler error is rethrown after the rollback.
 * @returns 'handled', or 'duplicate' when the inbox had already seen the pair
 */
export async function deliver<P, Tx extends PrismaTransactionLike>(
  prisma: PrismaClientLike<Tx>,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  return deliverToHandler(prismaDatabase(prisma, TEST_TRANSACTION), handler, message)
}

/** Collects log lines so tests can assert what a handler said. */
export function memoryLogger() {
  const lines: { level: string; obj: object; msg?: string | undefined }[] = []
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}
