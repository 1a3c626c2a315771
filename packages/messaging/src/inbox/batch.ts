import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { consumerSpanTarget, inConsumerSpan } from '../tracing.js'
import type { ConsumedMessage, TransactionClient } from '../types.js'
import {
  runAlone,
  settleCommitted,
  type DeliveryBatcher,
  type DeliveryControl,
  type DeliveryRuntime,
} from './handle-delivery.js'
import type { Release } from './slots.js'

/** How one handler queue batches its deliveries; see `ConsumerOptions.batchMax` and `batchWaitMs`. */
export interface BatchSettings {
  /** Most deliveries in one transaction; 1 turns batching off. */
  max: number
  /** How long a slot holder waits for more deliveries when two or more (and fewer than `max`) wait, ms. */
  waitMs: number
}

interface Waiting {
  message: ConsumedMessage
  control: DeliveryControl
  settled: () => void
}

/**
 * Stable order by correlation id (the order id in this fleet): within a batch, messages of one saga
 * keep their delivery order, and messages of different sagas run in one global order, so two
 * batches that lock two orders (the services' per-order advisory locks) lock them in the same order
 * and cannot deadlock on them (docs/architecture.md, "Batched inbox commits").
 */
const lockOrder = (batch: readonly Waiting[]): Waiting[] =>
  batch
    .map((item, index) => ({ item, index }))
    .sort((a, b) =>
      a.item.message.correlationId < b.item.message.correlationId
        ? -1
        : a.item.message.correlationId > b.item.message.correlationId
          ? 1
          : a.index - b.index,
    )
    .map(({ item }) => item)

/**
 * The batcher of one consumer channel (B3 of per-message-cost.md, optimistic isolation). Valid
 * deliveries wait here for a transaction slot; the queue asks `runtime.slots` for one slot at a time,
 * and when it is granted every delivery then waiting (up to `settings.max`, after one turn of the
 * event loop so the deliveries of the same socket read join, and at most `settings.waitMs` more when
 * two or more wait) goes into one transaction: one multi-row inbox INSERT, the handler of each new
 * message (duplicates skipped) in correlation-id order, every outbox INSERT with the one COMMIT
 * (`Database.inboxBatchTransaction`); then each delivery is acked. A lone delivery takes today's
 * path (`runAlone`), so at low load nothing changes. One batch of the channel runs at a time (the
 * next one forms meanwhile): two batches of one queue could take their messages' row locks in
 * interleaved orders and deadlock each other. If anything fails (a handler throws, the
 * database, the COMMIT) the transaction rolls back and every delivery of the batch runs alone
 * through `runAlone`, with its retries, attempts and dead-lettering as if it had never been
 * batched: a failing message costs the others one rollback. Each handler runs in its message's own
 * consumer span. Deliveries of a channel that is gone stay unacked (the broker redelivers them).
 */
export function createBatcher<Tx extends TransactionClient>(
  runtime: DeliveryRuntime<Tx>,
  settings: BatchSettings,
): DeliveryBatcher {
  const { stopping } = runtime
  const inboxBatchTransaction = runtime.database.inboxBatchTransaction?.bind(runtime.database)
  let pending: Waiting[] = []
  let asking = false
  // One batch of this channel at a time: two batches of one queue would take the locks of their
  // messages in two interleaved orders (inventory's stock rows) and could deadlock each other.
  let batchRunning = false
  // A granted slot waiting a turn (or the window) before it takes its batch: no second slot meanwhile.
  let forming = false

  // The channel or the consumer stopped: whatever still waits is left for redelivery.
  const abandon = (): void => {
    const left = pending
    pending = []
    left.forEach((item) => item.settled())
  }
  stopping.addEventListener('abort', abandon, { once: true })

  /**
   * Up to `max` waiting deliveries, in delivery order, never two of one message id (the queue's
   * per-id chains already keep a second copy out while the first runs; an envelope id that differs
   * from the AMQP message id would slip past them).
   */
  const take = (): Waiting[] => {
    const batch: Waiting[] = []
    const ids = new Set<string>()
    const rest: Waiting[] = []
    for (const item of pending) {
      const id = item.message.id.toLowerCase()
      if (batch.length < settings.max && !ids.has(id)) {
        ids.add(id)
        batch.push(item)
      } else rest.push(item)
    }
    pending = rest
    return batch
  }

  const ask = (): void => {
    if (asking || forming || batchRunning || pending.length === 0 || stopping.aborted) return
    asking = true
    void runtime.slots.acquire(stopping).then(granted, () => undefined)
  }

  const granted = async (release: Release | undefined): Promise<void> => {
    asking = false
    if (!release) return
    forming = true
    try {
      if (pending.length < settings.max) await nextTurn()
      if (settings.waitMs > 0 && pending.length >= 2 && pending.length < settings.max)
        await sleep(settings.waitMs)
    } catch {
      // nextTurn and sleep do not reject without a signal; nothing to do.
    } finally {
      forming = false
    }
    if (stopping.aborted) {
      release()
      return
    }
    const batch = take()
    const [first] = batch
    if (!first) release()
    else if (batch.length === 1 || !inboxBatchTransaction) {
      // Deliveries that came meanwhile need not wait for this one: ask for another slot now.
      ask()
      void runAlone(first.message, first.control, runtime, release).finally(first.settled)
    } else
      void runBatch(batch, release, inboxBatchTransaction)
        .catch((error: unknown) =>
          runtime.logger.error({ err: error, handler: runtime.handler.name }, 'batch failed unexpectedly'),
        )
        .finally(() => batch.forEach((item) => item.settled()))
  }

  const runBatch = async (
    batch: Waiting[],
    release: Release,
    transaction: NonNullable<typeof inboxBatchTransaction>,
  ): Promise<void> => {
    const { handler, counters, logger } = runtime
    batchRunning = true
    const ordered = lockOrder(batch)
    const started = performance.now()
    let fresh: ReadonlySet<string> | undefined
    let failure: unknown
    try {
      fresh = await transaction(
        ordered.map(({ message }) => ({ messageId: message.id, handler: handler.name })),
        async (tx, inserted) => {
          for (const { message } of ordered) {
            if (!inserted.has(message.id.toLowerCase())) continue
            await inConsumerSpan(consumerSpanTarget(handler.name, message), () => handler.handle(message, tx))
          }
          return inserted
        },
      )
    } catch (error) {
      failure = error
    } finally {
      release()
      batchRunning = false
      // What waited meanwhile is the next batch (acks and fallbacks below need no slot).
      ask()
    }
    if (fresh) {
      const durationMs = performance.now() - started
      counters.batchesTotal += 1
      // Acked in delivery order, each after the COMMIT that holds its effect.
      for (const { message, control } of batch)
        settleCommitted(message, control, runtime, fresh.has(message.id.toLowerCase()), durationMs)
      if (fresh.size > 0) runtime.onCommitted()
      return
    }
    counters.batchFallbacksTotal += 1
    if (!stopping.aborted)
      logger.warn(
        { err: failure, handler: handler.name, messages: batch.length },
        'batch transaction rolled back; handling its messages one by one',
      )
    await Promise.all(batch.map((item) => runAlone(item.message, item.control, runtime)))
  }

  return {
    get waiting() {
      return pending.length
    },
    get asking() {
      return asking
    },
    submit(message, control) {
      if (stopping.aborted) return Promise.resolve()
      return new Promise<void>((settled) => {
        pending.push({ message, control, settled })
        ask()
      })
    },
  }
}
