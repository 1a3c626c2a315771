import type { ConsumeMessage } from 'amqplib'
import { errorCode, errorMessage } from '../errors.js'
import { parseDelivery } from '../inbox/parse-delivery.js'
import { reportDeadLettered } from '../inbox/dead-letter.js'
import { anyPayload, versionOrder } from '../inbox/versions.js'
import { pause, retryDelayMs, type RetryPolicy } from '../inbox/retry-policy.js'
import type { Signals } from '../signals.js'
import { inBatchConsumerSpan } from '../tracing.js'
import type { ConsumedMessage, Logger, MessageContract } from '../types.js'
import type { Queryable, RecorderCounters, RecorderDefinition } from './types.js'

/** How a flush settles deliveries on the channel they came on. */
export interface FlushControl {
  /** Acks `delivery` and, with `upTo`, every earlier unacked delivery of the channel (`multiple`). */
  ack(delivery: ConsumeMessage, upTo: boolean): void
  /** Returns `delivery` to the queue. */
  requeue(delivery: ConsumeMessage): void
  /** Publishes the dead-letter copy with `reason`, confirmed; rejects when the broker did not take it. */
  deadLetter(delivery: ConsumeMessage, reason: string): Promise<void>
}

/** Everything a flush needs, fixed per recorder. */
export interface FlushRuntime {
  definition: RecorderDefinition
  /** Where the recorder consumes, for its span's destination. */
  exchange: string
  queue: string
  db: Queryable
  /** The recorded contracts by routing key and by type. */
  contracts: ReadonlyMap<string, MessageContract<unknown>>
  counters: RecorderCounters
  signals: Signals
  logger: Logger
  /** Backoff while the database is unavailable (no attempt limit: it is not the messages' fault). */
  policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>
  /**
   * Aborted when the channel is gone or the recorder stops: a flush waiting to retry gives up and
   * leaves its deliveries unacked (the broker redelivers them).
   */
  stopping: AbortSignal
}

type Outcome = 'done' | 'requeue'

/**
 * Whether a failed `record` is the rows' fault: SQLSTATE class 22 (data exception) or 23 (integrity
 * constraint violation; https://www.postgresql.org/docs/current/errcodes-appendix.html), or a
 * TypeError/RangeError from `record`'s code on the data. Anything else (a lost connection carries
 * no code at all) is the database's: waited out, never dead-lettered.
 */
const rowFault = (error: unknown): boolean => {
  if (error instanceof TypeError || error instanceof RangeError) return true
  return /^2[23][0-9A-Z]{3}$/.test(errorCode(error) ?? '')
}

/** What a delivery of no recorded type is parsed by, only to be dead-lettered. */
const UNRECORDED: MessageContract = { type: '', routingKey: '', schema: anyPayload }

/**
 * Records `messages` in one `record` call, waiting out an unavailable database (backoff, no attempt
 * limit). Resolves 'ok', 'refused' (a fault of the rows: the caller isolates or dead-letters), or
 * 'stopped' (the recorder stops: leave the deliveries unacked).
 */
async function recordWithRetry(
  messages: ConsumedMessage<unknown>[],
  runtime: FlushRuntime,
): Promise<{ kind: 'ok' } | { kind: 'refused'; error: unknown } | { kind: 'stopped' }> {
  for (let outage = 1; ; outage += 1) {
    try {
      // One span per statement, linked to each message's trace (tracing.ts).
      const target = { recorder: runtime.definition.name, exchange: runtime.exchange, queue: runtime.queue }
      await inBatchConsumerSpan(target, messages, () => runtime.definition.record(messages, runtime.db))
      runtime.counters.batchesTotal += 1
      runtime.counters.recordedTotal += messages.length
      return { kind: 'ok' }
    } catch (error) {
      if (rowFault(error)) return { kind: 'refused', error }
      runtime.logger.warn(
        { err: error, recorder: runtime.definition.name, messages: messages.length, outage },
        'recording failed (database unavailable); retrying',
      )
      if (!(await pause(retryDelayMs(outage, runtime.policy), runtime.stopping))) return { kind: 'stopped' }
    }
  }
}

type Valid = { delivery: ConsumeMessage; message: ConsumedMessage<unknown> }

/** What one flush decided per delivery so far, and how it dead-letters one. */
class FlushOutcomes {
  readonly #outcomes = new Map<ConsumeMessage, Outcome>()

  constructor(
    readonly control: FlushControl,
    readonly runtime: FlushRuntime,
  ) {}

  done(delivery: ConsumeMessage): void {
    this.#outcomes.set(delivery, 'done')
  }

  /** Whether every one of `deliveries` ended well. */
  allDone(deliveries: readonly ConsumeMessage[]): boolean {
    return deliveries.every((delivery) => this.#outcomes.get(delivery) === 'done')
  }

  isDone(delivery: ConsumeMessage): boolean {
    return this.#outcomes.get(delivery) === 'done'
  }

  /** Records a valid message as handled: signalled, to be acked. */
  recorded(items: readonly Valid[]): void {
    const { signals, definition } = this.runtime
    for (const { delivery, message } of items) {
      this.done(delivery)
      signals.emit('handled', {
        id: message.id,
        type: message.type,
        handler: definition.name,
        correlationId: message.correlationId,
      })
    }
  }

  /** Dead-letters `delivery`; when the broker does not take the copy, it is to be requeued instead. */
  async deadLetter(delivery: ConsumeMessage, reason: string, id?: string, type?: string): Promise<void> {
    const { logger, definition } = this.runtime
    try {
      await this.control.deadLetter(delivery, reason)
      this.done(delivery)
      reportDeadLettered(
        this.runtime,
        { id, type, queue: this.runtime.queue, reason },
        { recorder: definition.name },
      )
    } catch (error) {
      // The copy is not safely in the DLQ, so the original must not be acked.
      logger.error(
        { err: error, messageId: id, recorder: definition.name },
        'dead-lettering failed; requeueing',
      )
      this.#outcomes.set(delivery, 'requeue')
    }
  }
}

/** Parses each delivery against its contract; dead-letters those that are not valid. */
async function validate(deliveries: readonly ConsumeMessage[], outcomes: FlushOutcomes): Promise<Valid[]> {
  const valid: Valid[] = []
  for (const delivery of deliveries) {
    const { contracts } = outcomes.runtime
    const raw = {
      content: delivery.content,
      routingKey: delivery.fields.routingKey,
      properties: delivery.properties,
    }
    // By routing key, the common case; else by the AMQP or the envelope's type, for a delivery sent
    // straight to the queue (`order dlq requeue` uses the default exchange: the key is the queue's).
    const amqpType: unknown = delivery.properties.type
    let contract =
      contracts.get(raw.routingKey) ?? (typeof amqpType === 'string' ? contracts.get(amqpType) : undefined)
    const parsed = await parseDelivery(raw, (type) => {
      contract ??= type === undefined ? undefined : contracts.get(type)
      if (!contract) return UNRECORDED
      if (type === undefined || type === contract.type) return contract
      // Another version of a routing key read here: by its own contract if known, else unvalidated.
      return (
        contracts.get(type) ??
        (versionOrder(type, contract.type) === 0 ? contract : { ...contract, type, schema: anyPayload })
      )
    })
    if (!contract) {
      const reason = `neither routing key '${raw.routingKey}' nor the type is recorded here`
      await outcomes.deadLetter(delivery, reason, delivery.properties.messageId as string | undefined)
      continue
    }
    if (parsed.ok) valid.push({ delivery, message: { ...parsed.message, attempt: 1 } })
    else {
      const messageId = parsed.id ?? (delivery.properties.messageId as string | undefined)
      await outcomes.deadLetter(delivery, parsed.reason, messageId, parsed.type)
    }
  }
  return valid
}

/**
 * Records `valid` in one `record` call; if it refuses the batch, records each message alone and
 * dead-letters one still refused alone. Resolves false when the recorder stopped meanwhile.
 */
async function recordValid(valid: readonly Valid[], outcomes: FlushOutcomes): Promise<boolean> {
  const { runtime } = outcomes
  const all = await recordWithRetry(
    valid.map((v) => v.message),
    runtime,
  )
  if (all.kind === 'stopped') return false
  if (all.kind === 'ok') {
    outcomes.recorded(valid)
    return true
  }
  if (valid.length > 1) runtime.counters.splitTotal += 1
  for (const item of valid) {
    const alone = valid.length > 1 ? await recordWithRetry([item.message], runtime) : all
    if (alone.kind === 'stopped') return false
    if (alone.kind === 'ok') outcomes.recorded([item])
    else {
      const reason = `recording failed: ${errorMessage(alone.error)}`
      await outcomes.deadLetter(item.delivery, reason, item.message.id, item.message.type)
    }
  }
  return true
}

/**
 * Records a batch of deliveries of one channel, in order, settling each: invalid ones dead-lettered,
 * the valid recorded (`recordValid`). When all ended well one `basic.ack` with `multiple` settles
 * the batch (one flush at a time per channel). Resolves false when the recorder stopped or the
 * channel went meanwhile (the unsettled deliveries are redelivered).
 */
export async function flushBatch(
  deliveries: readonly ConsumeMessage[],
  control: FlushControl,
  runtime: FlushRuntime,
): Promise<boolean> {
  const outcomes = new FlushOutcomes(control, runtime)
  const valid = await validate(deliveries, outcomes)
  if (valid.length > 0 && !(await recordValid(valid, outcomes))) return false
  const last = deliveries.at(-1)
  if (last && outcomes.allDone(deliveries)) {
    control.ack(last, true)
    return true
  }
  // Only a dead-letter copy the broker did not take gets here: give the link a moment first, so a
  // broken DLQ does not turn into a hot redelivery loop.
  if (!(await pause(retryDelayMs(1, runtime.policy), runtime.stopping))) return false
  for (const delivery of deliveries) {
    if (outcomes.isDone(delivery)) control.ack(delivery, false)
    else control.requeue(delivery)
  }
  return true
}
