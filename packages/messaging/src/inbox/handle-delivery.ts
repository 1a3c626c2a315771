import type { Message } from 'amqplib'
import type { Signals } from '../signals.js'
import type { ConsumedMessage, Database, HandlerDefinition, Logger, TransactionClient } from '../types.js'
import { inConsumerSpan } from '../tracing.js'
import { isRejectedValue, isTransientDatabaseError } from '../database-errors.js'
import { errorCode, errorMessage } from '../errors.js'
import type { HandlerPace } from './batch-size.js'
import { inInbox } from './inbox-record.js'
import { blockKey, inOrder, startKey } from './ordering.js'
import type { OrderedRuntime } from './ordering-sweep.js'
import { reportDeadLettered } from './dead-letter.js'
import { holdNewer, parseForHandler, routingKeyOf } from './versions.js'
import { afterFailure, pause, retryDelayMs, type RetryPolicy } from './retry-policy.js'
import type { Release, Slots } from './slots.js'

/** Counters of one handler; the consumer's metrics read them. */
export interface HandlerCounters {
  /** Deliveries whose handler committed. */
  handledTotal: number
  /** Deliveries the inbox had already seen (acked without running the handler). */
  duplicatesTotal: number
  /** Handler failures that were retried. */
  retriedTotal: number
  /** Messages moved to the dead-letter queue (poison, or out of attempts). */
  deadLetteredTotal: number
  /** Deliveries being worked on now (running, waiting for a transaction slot, or waiting for a retry). */
  inFlight: number
  /** Transactions that took two or more deliveries of the queue and committed (inbox/batch.ts). */
  batchesTotal: number
  /** Such transactions rolled back, whose deliveries were then handled one by one. */
  batchFallbacksTotal: number
  /** Handler transactions that failed for transient database reasons and were retried without spending an attempt. */
  transientRetriedTotal: number
  /** Holds of deliveries of a newer version than the handler's (inbox/versions.ts `holdNewer`). */
  heldTotal: number
  /** Such deliveries held now (in `inFlight` too). */
  held: number
  /** Ordered deliveries that came before their predecessor and were held (inbox/ordering.ts). */
  orderWaitedTotal: number
  /** Held ordered deliveries handled in this process once their predecessor was (inbox/ordering-drain.ts). */
  orderReleasedTotal: number
  /** Held ordered deliveries that failed there and were put back into the queue for its retries. */
  orderPutBackTotal: number
  /** Keys first seen above sequence 1 whose cursor this process's sweep started after `startSettleMs`. */
  orderSettledTotal: number
  /** Keys blocked by a dead-lettered message now, as the last sweep saw them (per database). */
  orderBlocked: number
  /** Ordered deliveries held now, as the last sweep saw them (per database). */
  orderWaiting: number
  /** Keys whose held deliveries wait past `gapAfterMs` for a predecessor that has not come (per database). */
  orderGaps: number
}

/** What the pipeline needs from the channel the delivery came on. */
export interface DeliveryControl {
  /** Where the delivery came from: its exchange (`''`: sent straight to the queue) and delivery tag. */
  readonly delivery: { exchange: string; deliveryTag: number | undefined }
  /** Acks the delivery; a channel that closed meanwhile is logged, not thrown (redelivery is a duplicate). */
  ack(): void
  /** The delivery itself: what an ordered handler stores when it comes before its predecessor. */
  readonly original?: Message | undefined
  /** Puts the delivery back in the queue (nack with requeue). */
  requeue(): void
  /** Publishes the dead-letter copy, confirmed; rejects when the broker did not take it. */
  deadLetter(reason: string, attempts: number): Promise<void>
  /** Publishes a copy with `headers` added back into the queue, confirmed (`ChannelSession.putBack`). */
  putBack(headers: Record<string, unknown>): Promise<void>
}

/** The handler and everything around it, fixed per handler queue. */
export interface DeliveryRuntime<Tx extends TransactionClient> {
  handler: HandlerDefinition<Tx>
  /** The handler's queue. */
  queue: string
  database: Database<Tx>
  policy: RetryPolicy
  signals: Signals
  logger: Logger
  counters: HandlerCounters
  /**
   * Aborted when the consumer stops or the delivery's channel is gone: slot waits, retry waits and
   * dead-lettering end and leave the delivery for redelivery (it can no longer be acked anyway).
   */
  stopping: AbortSignal
  /** Called after a handler's transaction committed (wakes the relay for the rows it enqueued). */
  onCommitted: () => void
  /** The consumer-wide limit on handler transactions at once, shared by every handler queue. */
  slots: Slots
  /**
   * The queue's moving averages of handler time and of transaction time around the handlers (every
   * transaction feeds them; batches are sized by them, see `batchSize`).
   */
  pace: HandlerPace
  /** Present for a handler with `ordering: 'per-key'`: puts the held successor of a handled message back. */
  ordering?: OrderedRuntime | undefined
}

type Attempt =
  | { kind: 'handled'; next?: () => boolean }
  | { kind: 'duplicate' }
  /** An ordered delivery that came before its predecessor, now held in the database. */
  | { kind: 'waiting' }
  /** An ordered delivery that came after its key's cursor settled past it (inbox/ordering.ts). */
  | { kind: 'late'; settledPast: number }
  | { kind: 'handler-failed'; error: unknown }
  /** The transaction failed before the handler ran (database down): not the message's fault. */
  | { kind: 'unavailable'; error: unknown }
  /**
   * A statement before the handler refused the message's values (`isRejectedValue`: an ordered
   * key too long for its index, a NUL in a header it holds): it would fail every time.
   */
  | { kind: 'rejected'; error: unknown }

/**
 * Deliveries this message had before this one: a quorum queue's `x-delivery-count` (so the attempt
 * budget holds across crashes), else 1 when `redelivered`.
 */
const priorDeliveries = (delivery: Message): number => {
  const count: unknown = delivery.properties.headers?.['x-delivery-count']
  if (typeof count === 'number' && Number.isInteger(count) && count >= 0) return count
  return delivery.fields.redelivered ? 1 : 0
}

/** Whether `message` goes through per-key order: an ordered handler, a sequenced message, its delivery at hand. */
const orderedOf = <Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
): boolean =>
  runtime.ordering !== undefined && message.ordering !== undefined && control.original !== undefined

/** Runs `fn` in `message`'s turn of its key (`OrderedRuntime.turn`). */
async function inTurn<Tx extends TransactionClient, T>(
  runtime: DeliveryRuntime<Tx>,
  message: ConsumedMessage,
  fn: () => Promise<T>,
): Promise<T> {
  const end = await (runtime.ordering as OrderedRuntime).turn(message.source, message.ordering?.key ?? '')
  try {
    return await fn()
  } finally {
    end()
  }
}

/**
 * One inbox transaction, in a consumer span (tracing.ts). A failure before the handler ran is the
 * database's: `unavailable`. One from the handler, or at COMMIT after it ran, spends the message's
 * attempt: otherwise a handler that always overruns would be retried forever, never dead-lettered.
 */
async function attemptOnce<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
): Promise<Attempt> {
  const { handler, database } = runtime
  let handlerRan = false
  let handlerError: { error: unknown } | undefined
  const began = performance.now()
  let handlerMs = 0
  try {
    const run = async (tx: Tx): Promise<void> => {
      handlerRan = true
      const started = performance.now()
      try {
        await handler.handle(message, tx)
      } catch (error) {
        handlerError = { error }
        throw error
      } finally {
        handlerMs = performance.now() - started
        runtime.pace.record(handlerMs)
      }
    }
    const outcome = await inConsumerSpan(handler.name, runtime.queue, message, control.delivery, () =>
      orderedOf(message, control, runtime)
        ? inTurn(runtime, message, () =>
            inOrder(database, handler.name, message, control.original as Message, run),
          )
        : inInbox(database, { messageId: message.id, handler: handler.name }, run).then((inbox): Attempt =>
            inbox.fresh ? { kind: 'handled' } : { kind: 'duplicate' },
          ),
    )
    runtime.pace.recordOverhead(performance.now() - began - handlerMs)
    return outcome
  } catch (error) {
    if (!handlerRan)
      return isRejectedValue(error) ? { kind: 'rejected', error } : { kind: 'unavailable', error }
    return { kind: 'handler-failed', error: handlerError ? handlerError.error : error }
  }
}

/** Dead-letters one delivery (poison, or out of attempts); never throws. See `handleDelivery`. */
async function deadLetter<Tx extends TransactionClient>(
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  reason: string,
  attempts: number,
  ids: { id?: string | undefined; type?: string | undefined },
): Promise<void> {
  const { handler, logger, stopping, policy } = runtime
  // The channel is gone (or the consumer stops): the redelivered copy dead-letters itself.
  if (stopping.aborted) return
  try {
    await control.deadLetter(reason, attempts)
  } catch (error) {
    if (stopping.aborted) return
    // The copy is not safely in the DLQ, so the original must not be acked: back off, then requeue.
    logger.error(
      { err: error, messageId: ids.id, handler: handler.name },
      'dead-lettering failed; requeueing',
    )
    if (await pause(retryDelayMs(attempts + 1, policy), stopping)) control.requeue()
    return
  }
  control.ack()
  reportDeadLettered(
    runtime,
    { id: ids.id, type: ids.type, queue: runtime.queue, reason },
    { handler: handler.name, attempts },
  )
}

/**
 * Acks a delivery whose transaction committed (`fresh`: the handler ran) or found it a duplicate,
 * and counts, logs and signals it. The caller calls `runtime.onCommitted` (once per transaction).
 */
export function settleCommitted<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  fresh: boolean,
  durationMs: number,
): void {
  const { handler, signals, logger, counters } = runtime
  const { id, type, correlationId, attempt } = message
  control.ack()
  if (fresh) {
    counters.handledTotal += 1
    logger.debug({ messageId: id, type, handler: handler.name, correlationId, attempt }, 'message handled')
    signals.emit('handled', { id, type, handler: handler.name, correlationId, durationMs })
  } else {
    counters.duplicatesTotal += 1
    // At-least-once delivery makes duplicates routine: debug, and counted.
    logger.debug({ messageId: id, type, handler: handler.name, correlationId }, 'duplicate message skipped')
    signals.emit('duplicate', { id, type, handler: handler.name })
  }
}

/** Acks an ordered delivery held in the database until its predecessor is handled, and counts it. */
function settleWaiting<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
): void {
  control.ack()
  runtime.counters.orderWaitedTotal += 1
  const { id, type, correlationId, ordering } = message
  runtime.logger.debug(
    { messageId: id, type, handler: runtime.handler.name, correlationId, ...ordering },
    'ordered message came before its predecessor; held',
  )
}

/** What forms batches of one channel's valid deliveries (inbox/batch.ts); see `handleDelivery`. */
export interface DeliveryBatcher {
  /** Resolves when the delivery is settled, or left unacked because the channel or consumer stopped. */
  submit(message: ConsumedMessage, control: DeliveryControl): Promise<void>
  /** Deliveries waiting here for a transaction slot now. */
  readonly waiting: number
  /** Whether it waits in `runtime.slots` now (one waiter stands for all of `waiting`). */
  readonly asking: boolean
}

/**
 * One delivery, start to end: another version is upcast or held (inbox/versions.ts); poison is
 * dead-lettered at once; a valid message goes to `batcher` when there is one (back to `runAlone`
 * when its batch fails), else to `runAlone`. Never throws.
 */
export async function handleDelivery<Tx extends TransactionClient>(
  delivery: Message,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  batcher?: DeliveryBatcher,
): Promise<void> {
  if (runtime.stopping.aborted) return
  const raw = {
    content: delivery.content,
    routingKey: routingKeyOf(delivery),
    properties: delivery.properties,
  }
  const parsed = await parseForHandler(raw, runtime.handler)
  if (parsed.ok === 'newer') return holdNewer(delivery, parsed, control, runtime)
  if (!parsed.ok) {
    // A body that is not even JSON names no id: the AMQP message id does.
    const messageId = parsed.id ?? (delivery.properties.messageId as string | undefined)
    await deadLetter(control, runtime, parsed.reason, 0, { id: messageId, type: parsed.type })
    return
  }
  const message: ConsumedMessage = { ...parsed.message, attempt: priorDeliveries(delivery) + 1 }
  if (batcher) await batcher.submit(message, control)
  else await runAlone(message, control, runtime)
}

/**
 * Counts, logs (without a stack: it is expected) and signals a transient failure of the handler's
 * transaction, then waits; resolves false when the wait was cut short. Spends no attempt.
 */
async function retryTransient<Tx extends TransactionClient>(
  message: ConsumedMessage,
  error: unknown,
  outages: number,
  runtime: DeliveryRuntime<Tx>,
): Promise<boolean> {
  const { handler, signals, logger, counters, stopping, policy } = runtime
  const { id, type, correlationId, attempt } = message
  const reason = errorMessage(error)
  counters.transientRetriedTotal += 1
  logger.warn(
    { messageId: id, type, handler: handler.name, correlationId, attempt, reason, code: errorCode(error) },
    'transient database failure in the handler transaction; retrying without spending an attempt',
  )
  signals.emit('retrying', { id, type, handler: handler.name, attempt, error: reason, transient: true })
  return pause(retryDelayMs(outages, policy), stopping)
}

/**
 * Dead-letters a delivery whose values the database refused before its handler ran (`rejected`:
 * retrying cannot help, and waiting as for an outage would hold it forever); an ordered one blocks
 * its key first, as one out of attempts does. Never throws.
 */
async function rejected<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  error: unknown,
  ordered: boolean,
): Promise<void> {
  const { handler, logger } = runtime
  const reason = `rejected by the database before the handler ran: ${errorMessage(error)}`
  if (ordered) await blockKey(runtime.database, handler.name, message, reason, logger)
  await deadLetter(control, runtime, reason, message.attempt, { id: message.id, type: message.type })
}

/**
 * Dead-letters an ordered delivery that came after its key's cursor settled past it: handling it
 * now would break the key's order, and acking it as a duplicate would drop a message never
 * handled. It does not block the key. Never throws.
 */
async function deadLetterLate<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  settledPast: number,
): Promise<void> {
  const sequence = message.ordering?.sequence
  const reason =
    `ordered message ${sequence} came after its key's order had started at ${settledPast + 1} ` +
    '(the settle window, consumer.ordering.startSettleMs, had passed): not handled out of order'
  const { id, type } = message
  await deadLetter(control, runtime, reason, message.attempt, { id, type })
}

/**
 * A valid message in transactions of its own: runs its handler in an inbox transaction and acks
 * after COMMIT; a handler error is retried in-process with backoff (unacked) until the attempts are
 * used up, then dead-lettered; a transient database failure (`isTransientDatabaseError`) spends no
 * attempt for up to `policy.transientMaxMs`. Each transaction takes a slot of `runtime.slots`
 * (`held`: one already taken). Never throws. When stopping or the channel is gone, a delivery not
 * running is left unacked for redelivery; a running transaction finishes.
 */
export async function runAlone<Tx extends TransactionClient>(
  message: ConsumedMessage,
  control: DeliveryControl,
  runtime: DeliveryRuntime<Tx>,
  held?: Release,
): Promise<void> {
  const { handler, signals, logger, counters, stopping, policy } = runtime
  const { id, type, correlationId } = message
  const log = { messageId: id, type, handler: handler.name, correlationId }
  let attempt = message.attempt
  let outages = 0
  let transientSince: number | undefined
  let slot = held
  for (;;) {
    // A slot per transaction, not per delivery: a delivery waiting for a retry holds no connection.
    const release = slot ?? (await runtime.slots.acquire(stopping))
    slot = undefined
    if (!release) return
    if (stopping.aborted) {
      release()
      return
    }
    let outcome: Attempt
    const started = performance.now()
    try {
      outcome = await attemptOnce({ ...message, attempt }, control, runtime)
    } finally {
      release()
    }
    if (outcome.kind === 'waiting') return settleWaiting(message, control, runtime)
    if (outcome.kind === 'late') return deadLetterLate(message, control, runtime, outcome.settledPast)
    if (outcome.kind === 'handled' || outcome.kind === 'duplicate') {
      const fresh = outcome.kind === 'handled'
      settleCommitted({ ...message, attempt }, control, runtime, fresh, performance.now() - started)
      if (fresh) runtime.onCommitted()
      if (outcome.kind === 'handled' && outcome.next?.()) runtime.ordering?.release(message)
      return
    }

    if (outcome.kind === 'unavailable') {
      // The database, not the message, failed: retry for as long as it takes, without using attempts.
      outages += 1
      logger.warn(
        { ...log, err: outcome.error, outages },
        'inbox transaction failed before the handler ran; retrying',
      )
      if (!(await pause(retryDelayMs(outages, policy), stopping))) return
      continue
    }

    // The channel went while the transaction ran: the redelivered copy takes over from here.
    if (stopping.aborted) return
    const ordered = orderedOf(message, control, runtime)
    if (outcome.kind === 'rejected')
      return rejected({ ...message, attempt }, control, runtime, outcome.error, ordered)
    if (ordered) await startKey(runtime.database, handler.name, message, logger)
    if (isTransientDatabaseError(outcome.error)) {
      transientSince ??= performance.now()
      if (performance.now() - transientSince <= policy.transientMaxMs) {
        outages += 1
        if (!(await retryTransient({ ...message, attempt }, outcome.error, outages, runtime))) return
        continue
      }
    }
    const error = errorMessage(outcome.error)
    if (afterFailure(attempt, policy) === 'dead-letter') {
      if (ordered) await blockKey(runtime.database, handler.name, message, error, logger)
      await deadLetter(control, runtime, `handler failed after ${attempt} attempts: ${error}`, attempt, {
        id,
        type,
      })
      return
    }
    counters.retriedTotal += 1
    logger.warn({ ...log, err: outcome.error, attempt }, 'handler failed; retrying')
    signals.emit('retrying', { id, type, handler: handler.name, attempt, error })
    if (!(await pause(retryDelayMs(attempt, policy), stopping))) return
    attempt += 1
  }
}
