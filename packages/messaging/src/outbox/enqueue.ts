import { positiveInteger } from '../errors.js'
import { v7 as uuidv7 } from 'uuid'
import { assertInTransaction, deferOutboxRow, execute, queryRows } from '../database.js'
import { activeTraceCarrier } from '../tracing.js'
import { NEXT_SEQUENCE, OUTBOX_INSERT } from '../sql.js'
import { toPublishable, type OutboxHeaders } from './envelope.js'
import type { OutgoingMessage, TransactionClient } from '../types.js'

/** Thrown by `enqueue` for a message that cannot be stored (missing fields, payload not JSON). */
export class InvalidMessageError extends Error {
  override name = 'InvalidMessageError'
}

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

/** The next sequence number of `key` under `routingKey`, taken in `tx` (`NEXT_SEQUENCE`). */
async function nextSequence(tx: TransactionClient, routingKey: string, key: string): Promise<number> {
  const [row] = await queryRows<{ seq: string }>(tx, NEXT_SEQUENCE, [routingKey, key])
  return Number(row?.seq)
}

/** Options of one `enqueue`. */
export interface EnqueueOptions {
  /**
   * The broker's `max_message_size`, bytes (RabbitMQ 3.10: 128 MiB by default, 4.x: 16 MiB). A
   * message whose body as the relay will publish it (less `source`, with a traceparent, without a
   * tracestate the relay's span adds) is larger is refused before anything is written, instead of
   * parked when the broker refuses it. Absent: no check (and no cost).
   */
  maxMessageBytes?: number
}

/** A W3C traceparent's length (55 characters), to measure a row that has none yet. */
const TRACEPARENT_SIZED = `00-${'0'.repeat(32)}-${'0'.repeat(16)}-00`

/**
 * @throws InvalidMessageError when the body the relay would publish for `row` is over `max` bytes
 * @throws RangeError when `max` is not a positive integer
 */
function assertFits(row: Parameters<typeof toPublishable>[0], max: number): void {
  positiveInteger('enqueue: maxMessageBytes', max)
  // The relay's producer span gives a row without a traceparent one of its own: count its bytes.
  const headers = row.headers?.traceparent ? row.headers : { ...row.headers, traceparent: TRACEPARENT_SIZED }
  const bytes = toPublishable({ ...row, headers }, '').content.length
  if (bytes > max)
    throw new InvalidMessageError(
      `enqueue: ${row.type} is ${bytes} bytes as a message, over maxMessageBytes ${max} (the broker's max_message_size); nothing was written`,
    )
}

function validTime(at: Date, type: string): string {
  if (!(at instanceof Date) || Number.isNaN(at.getTime()))
    throw new InvalidMessageError(`enqueue: occurredAt of ${type} must be a valid Date`)
  return at.toISOString()
}

/**
 * Stores `message` as an outbox row inside the caller's transaction and returns its id, a UUIDv7
 * made here and nowhere else (AMQP `messageId`, CloudEvents `id`; consumers dedupe on it). The row
 * is published after the commit; a rollback leaves nothing. In a `pgDatabase` transaction the
 * INSERT goes with its COMMIT, so the row is not visible inside it (`Database`, types.ts). The row's
 * `occurred_at` is the database's `now()`; `message.occurredAt` is published as CloudEvents `time`
 * but never judges an age. The stored trace context is the active OpenTelemetry one, else
 * `message.traceparent`. Example: `await enqueue(tx, { type: 'order.created.v1', routingKey:
 * 'order.created', payload, aggregateId: orderId, correlationId: orderId })`.
 * @throws NotInTransactionError when `tx` is a root PrismaClient, a pg Pool or a pg client outside BEGIN
 * @throws InvalidMessageError when type, routingKey or correlationId is empty, the payload is not
 * JSON, occurredAt is not a valid Date, or the message is over `options.maxMessageBytes`
 * @throws SqlValueError in a `pgDatabase` transaction for a value with a NUL character
 */
export async function enqueue<P>(
  tx: TransactionClient,
  message: OutgoingMessage<P>,
  options?: EnqueueOptions,
): Promise<string> {
  const type = required(message.type, 'type')
  const routingKey = required(message.routingKey, 'routingKey')
  const headers: OutboxHeaders = { correlationId: required(message.correlationId, 'correlationId') }
  if (message.causationId) headers.causationId = message.causationId
  // The active OpenTelemetry context (the request's or the consumer's span) wins over the caller's
  // traceparent, a hand-made child of the cause that belongs to no span; without an SDK it is empty.
  const active = activeTraceCarrier()
  const traceparent = active.traceparent ?? message.traceparent
  if (traceparent) headers.traceparent = traceparent
  if (active.tracestate) headers.tracestate = active.tracestate
  if (message.occurredAt) headers.occurredAt = validTime(message.occurredAt, type)
  if (message.dataschema) headers.dataschema = message.dataschema
  if (message.orderingKey !== undefined) headers.orderingKey = required(message.orderingKey, 'orderingKey')
  const payload = serialise(message.payload, type)
  const id = uuidv7()
  const aggregateId = message.aggregateId ?? null
  const row = {
    id,
    type,
    routing_key: routingKey,
    payload_json: payload,
    headers,
    aggregate_id: aggregateId,
    attempts: 0,
  }
  if (options?.maxMessageBytes !== undefined)
    assertFits({ ...row, payload: undefined, occurred_at: new Date() }, options.maxMessageBytes)
  await assertInTransaction(tx, 'enqueue')
  // At once, not with COMMIT: the sequence row's lock, held to the end, orders the key's commits.
  if (headers.orderingKey !== undefined)
    headers.sequence = await nextSequence(tx, routingKey, headers.orderingKey)
  // In a pgDatabase transaction the INSERT goes with COMMIT, one round trip fewer (database.ts).
  if (!deferOutboxRow(tx, row))
    await execute(tx, OUTBOX_INSERT, [id, type, routingKey, payload, JSON.stringify(headers), aggregateId])
  return id
}
