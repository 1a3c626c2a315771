/**
 * @saga/messaging/testing: what a service's tests need to exercise its reactions the way the
 * consumer runs them, against a real database and without a broker. Not for production code.
 */
import { randomUUID } from 'node:crypto'
import type pg from 'pg'
import { pgDatabase, prismaDatabase, type PrismaClientLike } from '../database.js'
import { deliverToHandler } from '../inbox/deliver-to-handler.js'
import { OUTBOX_OF_AGGREGATE } from '../sql.js'
import type { ConsumedMessage, HandlerDefinition, MessageContract, PrismaTransactionLike } from '../types.js'

export { testStats, type TestStatsFigures } from './stats.js'

/** A fixed W3C traceparent the test messages carry, so follow-ups can be checked for a child of it. */
export const TEST_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'

/** Envelope attributes of a test message; a string is the correlation id alone. */
export type ConsumedOptions = string | { correlationId: string; source?: string; time?: Date }

/**
 * A consumed message as the consumer hands it to a handler: a fresh id, `source` `test` unless
 * given, `time` now unless given, `TEST_TRACEPARENT`, and the payload as `contract`'s schema outputs it.
 * @throws Error naming the issues when `payload` does not satisfy the contract (a broken fixture)
 */
export function consumed<P>(
  contract: MessageContract<P>,
  payload: NoInfer<P>,
  options: ConsumedOptions,
): ConsumedMessage<P> {
  const { correlationId, source, time } = typeof options === 'string' ? { correlationId: options } : options
  const result = contract.schema['~standard'].validate(payload)
  if (result instanceof Promise) throw new Error(`${contract.type}: asynchronous schemas are not supported`)
  if (result.issues) {
    throw new Error(`${contract.type} fixture is invalid: ${result.issues.map((i) => i.message).join('; ')}`)
  }
  return {
    id: randomUUID(),
    type: contract.type,
    source: source ?? 'test',
    time: time ?? new Date(),
    subject: correlationId,
    correlationId,
    traceparent: TEST_TRACEPARENT,
    routingKey: contract.routingKey,
    payload: result.value,
    attempt: 1,
  }
}

/** Transaction limits for a test delivery, ms: generous, the service tests share a 2-core machine. */
const TEST_TRANSACTION = { timeoutMs: 20_000, maxWaitMs: 20_000 }

/**
 * Delivers `message` to `handler` through the real inbox (`deliverToHandler`): a pg Pool opens the
 * transaction as the services' consumers do (`pgDatabase`), a PrismaClient as a Prisma interactive
 * transaction. A handler error is rethrown after the rollback.
 * @returns 'handled', or 'duplicate' when the inbox had already seen the pair
 */
export function deliver<P>(
  pool: pg.Pool,
  handler: HandlerDefinition<pg.PoolClient, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'>
export function deliver<P, Tx extends PrismaTransactionLike>(
  prisma: PrismaClientLike<Tx>,
  handler: HandlerDefinition<Tx, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'>
export function deliver<P>(
  db: pg.Pool | PrismaClientLike<PrismaTransactionLike>,
  handler: HandlerDefinition<pg.PoolClient, P> | HandlerDefinition<PrismaTransactionLike, P>,
  message: ConsumedMessage<P>,
): Promise<'handled' | 'duplicate'> {
  if ('$transaction' in db) {
    const prismaHandler = handler as HandlerDefinition<PrismaTransactionLike, P>
    return deliverToHandler(prismaDatabase(db, TEST_TRANSACTION), prismaHandler, message)
  }
  return deliverToHandler(pgDatabase(db), handler as HandlerDefinition<pg.PoolClient, P>, message)
}

/** One log line a `memoryLogger` kept. */
export interface LoggedLine {
  level: string
  obj: object
  msg?: string | undefined
}

/** A Logger that keeps its lines in `lines`, so tests can assert what a handler said. */
export function memoryLogger() {
  const lines: LoggedLine[] = []
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg })
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

/** An outbox row as a test reads it. */
export interface OutboxRowOf {
  type: string
  routing_key: string
  payload: unknown
  headers: Record<string, string>
}

/** The outbox rows about one aggregate (the order id) in enqueue order (ids are UUIDv7). */
export async function outboxOf(pool: pg.Pool, aggregateId: string): Promise<OutboxRowOf[]> {
  const { rows } = await pool.query<OutboxRowOf>(OUTBOX_OF_AGGREGATE, [aggregateId])
  return rows
}
