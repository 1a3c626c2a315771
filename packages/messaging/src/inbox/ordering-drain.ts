import type { ConsumeMessage } from 'amqplib'
import { queryRows } from '../database.js'
import { errorMessage } from '../errors.js'
import { ADVANCE_CURSOR, MARK_PUT_BACK, NEXT_HELD } from '../sql.js'
import type { ConsumedMessage, TransactionClient } from '../types.js'
import type { DeliveryRuntime } from './handle-delivery.js'
import { lockCursor, type OrderingSettings, type PutBack } from './ordering.js'
import { parseForHandler } from './versions.js'

/** A held delivery as `NEXT_HELD` reads it, its body as a Buffer (`heldRow`). */
interface HeldRow {
  message_id: string
  routing_key: string
  content: Buffer
  properties: ConsumeMessage['properties']
}

/** A held delivery as the database gives it: its `bytea` body a Buffer from pg, a Uint8Array from Prisma. */
type StoredRow = Omit<HeldRow, 'content'> & { content: Uint8Array }

/**
 * `row` with its body as a Buffer: Prisma's `$queryRawUnsafe` reads `bytea` as a plain Uint8Array,
 * whose `toString` lists its bytes (no JSON to parse) and which amqplib will not publish (the copy
 * put back). The Uint8Array's memory is shared, not copied; pg's Buffer is taken as it is.
 */
function heldRow(row: StoredRow): HeldRow {
  const { content } = row
  if (Buffer.isBuffer(content)) return row as HeldRow
  return { ...row, content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) }
}

/** One step of a drain: handled (`more`: the next is held too), nothing ready, or put back. */
type DrainStep = { kind: 'handled'; message: ConsumedMessage; more: boolean } | { kind: 'done' }

/** Where a drain runs: the handler queue's runtime, the channel to put back on, its settings. */
export interface DrainContext<Tx extends TransactionClient> {
  runtime: DeliveryRuntime<Tx>
  putBack: PutBack
  settings: OrderingSettings
  /** This process's turn of a key (`OrderedRuntime.turn`). */
  turn(producer: string, key: string): Promise<() => void>
}

/**
 * Handles the held deliveries of (producer, key) that are next in order, one transaction each, in
 * this process (no trip through the queue): under the cursor's lock, the held delivery with the
 * cursor's next sequence is parsed as a delivery and handled, the cursor moves on and the held row
 * is dropped, as `inOrder` does for a delivery. Each transaction takes a slot and the key's turn.
 * One that fails (the handler threw, or it is not valid for the handler) is put back into the queue
 * instead, where retries with backoff and dead-lettering take it; the drain ends there. Never throws.
 */
export async function drainKey<Tx extends TransactionClient>(
  context: DrainContext<Tx>,
  producer: string,
  key: string,
): Promise<void> {
  const { runtime } = context
  for (;;) {
    const release = await runtime.slots.acquire(runtime.stopping)
    if (!release) return
    const started = performance.now()
    let step: DrainStep
    const end = await context.turn(producer, key)
    try {
      step = await drainOne(context, producer, key)
    } finally {
      end()
      release()
    }
    if (step.kind === 'done') return
    const { id, type, correlationId } = step.message
    const handler = runtime.handler.name
    runtime.counters.handledTotal += 1
    runtime.counters.orderReleasedTotal += 1
    runtime.logger.debug({ messageId: id, type, handler, correlationId }, 'held ordered message handled')
    const durationMs = performance.now() - started
    runtime.signals.emit('handled', { id, type, handler, correlationId, durationMs })
    runtime.onCommitted()
    if (!step.more) return
  }
}

/** One transaction of `drainKey`; a failure puts the held delivery back (never throws). */
async function drainOne<Tx extends TransactionClient>(
  context: DrainContext<Tx>,
  producer: string,
  key: string,
): Promise<DrainStep> {
  const { runtime, settings } = context
  const handler = runtime.handler
  const cursor: [string, string, string] = [handler.name, producer, key]
  let held: { row: HeldRow; sequence: number } | undefined
  try {
    return await runtime.database.transaction(async (tx): Promise<DrainStep> => {
      const sequence = (await lockCursor(tx, cursor)).last + 1
      const params = [...cursor, sequence, settings.putBackAgainMs]
      const [found] = await queryRows<StoredRow>(tx, NEXT_HELD, params)
      if (!found) return { kind: 'done' }
      const row = heldRow(found)
      held = { row, sequence }
      const raw = { content: row.content, routingKey: row.routing_key, properties: row.properties }
      const parsed = await parseForHandler(raw, handler)
      if (parsed.ok !== true) throw new Error('not valid for the handler here; the queue decides')
      const message: ConsumedMessage = { ...parsed.message, attempt: 1 }
      await handler.handle(message, tx)
      const advance = [...cursor, sequence, message.id]
      const [advanced] = await queryRows<{ next: boolean }>(tx, ADVANCE_CURSOR, advance)
      return { kind: 'handled', message, more: advanced?.next === true }
    })
  } catch (error) {
    if (held) await putBackHeld(context, cursor, held, error)
    else runtime.logger.warn({ err: error, handler: handler.name, producer, key }, 'draining a key failed')
    return { kind: 'done' }
  }
}

/** Stamps a held delivery put back, then publishes its copy into the queue. Never throws. */
async function putBackHeld<Tx extends TransactionClient>(
  context: DrainContext<Tx>,
  cursor: [string, string, string],
  held: { row: HeldRow; sequence: number },
  cause: unknown,
): Promise<void> {
  const { runtime } = context
  const fields = { messageId: held.row.message_id, handler: cursor[0], producer: cursor[1], key: cursor[2] }
  runtime.logger.warn(
    { ...fields, reason: errorMessage(cause) },
    'held ordered message failed; put back into the queue for its retries',
  )
  try {
    await runtime.database.transaction((tx) => queryRows(tx, MARK_PUT_BACK, [...cursor, held.sequence]))
    const { content, properties } = held.row
    const copy = { content, properties, fields: {} } as ConsumeMessage
    await context.putBack(copy, { 'x-original-routing-key': held.row.routing_key })
    runtime.counters.orderPutBackTotal += 1
  } catch (error) {
    // Stamped or not, the sweep takes the key again after `putBackAgainMs`.
    runtime.logger.warn({ ...fields, err: error }, 'putting a held message back failed')
  }
}
