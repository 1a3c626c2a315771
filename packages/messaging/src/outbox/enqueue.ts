import { v7 as uuidv7 } from 'uuid'
import { assertInTransaction, execute } from '../database.js'
import type { OutgoingMessage, TransactionClient } from '../types.js'

/** Thrown by `enqueue` for a message that cannot be stored (missing fields, payload not JSON). */
export class InvalidMessageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'InvalidMessageError'
  }
}

/** What the `headers` column holds: the envelope attributes that have no column of their own. */
export interface OutboxHeaders {
  correlationId: string
  causationId?: string
  traceparent?: string
}

const INSERT = `INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id, occurred_at)
VALUES ($1::uuid, $2, $3, $4::jsonb, $5::jsonb, $6, COALESCE($7::timestamptz, now()))`

function required(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new InvalidMessageError(`enqueue: ${field} must be a non-empty string`)
  }
  return value
}

function serialise(payload: unknown, type: string): string {
  let json: string | undefined
  try {
    json = JSON.stringify(payload)
  } catch (error) {
    throw new InvalidMessageError(
      `enqueue: payload of ${type} is not JSON-serialisable: ${(error as Error).message}`,
    )
  }
  if (json === undefined) throw new InvalidMessageError(`enqueue: payload of ${type} is missing`)
  return json
}

/**
 * Stores `message` as an outbox row inside the caller's transaction (one INSERT) and returns its
 * id, a UUIDv7 (RFC 9562: time-ordered, so rows claim roughly in commit order) made here and
 * nowhere else: it travels as AMQP `messageId` and CloudEvents `id`, and consumers dedupe on it.
 * The row is published by the relay after the transaction commits; a rollback leaves nothing.
 *
 * Example: `await prisma.$transaction(async (tx) => { ...; await enqueue(tx, { type: 'order.created.v1',
 * routingKey: 'order.created', payload, aggregateId: orderId, correlationId: orderId }) })`.
 *
 * @throws NotInTransactionError when `tx` is a root PrismaClient, a pg Pool or a pg client outside BEGIN.
 * @throws InvalidMessageError when type, routingKey or correlationId is empty or the payload is not JSON.
 */
export async function enqueue<P>(tx: TransactionClient, message: OutgoingMessage<P>): Promise<string> {
  const type = required(message.type, 'type')
  const routingKey = required(message.routingKey, 'routingKey')
  const headers: OutboxHeaders = { correlationId: required(message.correlationId, 'correlationId') }
  if (message.causationId) headers.causationId = message.causationId
  if (message.traceparent) headers.traceparent = message.traceparent
  const payload = serialise(message.payload, type)
  await assertInTransaction(tx, 'enqueue')
  const id = uuidv7()
  await execute(tx, INSERT, [
    id,
    type,
    routingKey,
    payload,
    JSON.stringify(headers),
    message.aggregateId ?? null,
    message.occurredAt ? message.occurredAt.toISOString() : null,
  ])
  return id
}
