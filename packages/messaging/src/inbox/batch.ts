import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises'
import { inConsumerSpan } from '../tracing.js'
import type { ConsumedMessage, Database, TransactionClient } from '../types.js'
import {
  runAlone,
  settleCommitted,
  type DeliveryBatcher,
  type DeliveryControl,
  type DeliveryRuntime,
} from './handle-delivery.js'
import { batchSize } from './batch-size.js'
import { keyId } from './ordering.js'
import { inOrderBatch } from './ordering-batch.js'
import type { Release } from './slots.js'

/**
 * How one handler queue batches its deliveries; see `ConsumerOptions.batchMax`, `batchBudgetMs`
 * and `batchWaitMs`.
 */
export interface BatchSettings {
  /** Most deliveries in one transaction; 1 turns batching off. */
  max: number
  /**
   * Handler time one batch may hold, ms: a batch takes as many deliveries as fit at the queue's
   * average handler time, or one (`batchSize`); `Infinity` always takes up to `max`.
   */
  budgetMs: number
  /** How long a slot holder waits for more deliveries when two or more (and fewer than `max`) wait, ms. */
  waitMs: number
}

interface Waiting {
  message: ConsumedMessage
  control: DeliveryControl
  settled: () => void
}

/**
 * Stable order by correlation id (`sort` is stable): within a batch, messages of one process keep
 * their delivery order, and messages of different processes run in one global order, so two batches
 * whose handlers lock per process (an advisory lock on the correlation id, say) take those locks in
 * the same order and cannot deadlock on them.
 */
const lockOrder = (batch: readonly Waiting[]): Waiting[] =>
  [...batch].sort(({ message: a }, { message: b }) =>
    a.correlationId < b.correlationId ? -1 : a.correlationId > b.correlationId ? 1 : 0,
  )

/**
 * The batcher of one consumer channel (optimistic isolation). Valid deliveries wait here for a
 * transaction slot (`runtime.slots`, asked for one at a time); once granted, the deliveries then
 * waiting (after one event-loop turn, and at most `settings.waitMs` more when two or more wait) go
 * into one `Database.inboxBatchTransaction`, up to `batchSize` of them: one multi-row inbox INSERT,
 * each new message's handler in correlation-id order (duplicates skipped), every outbox INSERT with
 * the one COMMIT; then each delivery is acked. A lone delivery, and every delivery while the batch
 * size is 1, takes `runAlone`, so slow handlers run one per transaction side by side on the free
 * slots. One batch of the channel runs at a time (two could take row locks in interleaved orders
 * and deadlock); meanwhile the next forms, and deliveries beyond it run alone on free slots. If
 * anything fails the transaction rolls back and each delivery runs alone through `runAlone`, with
 * its own retries and dead-lettering: a failing message costs the others one rollback. Deliveries
 * of a channel that is gone stay unacked (the broker redelivers them).
 *
 * Its states: `asking` (waiting in the slots' queue), `forming` (a slot granted, waiting a turn or
 * the window for company), `batchRunning`; `asking` may overlap `batchRunning` (for a delivery
 * beyond the next batch), the others exclude each other.
 */
export class Batcher<Tx extends TransactionClient> implements DeliveryBatcher {
  #pending: Waiting[] = []
  #asking = false
  #forming = false
  #batchRunning = false
  readonly #runtime: DeliveryRuntime<Tx>
  readonly #settings: BatchSettings
  readonly #transaction: Database<Tx>['inboxBatchTransaction']
  /** An ordered handler's batches open with their cursors' move (inbox/ordering-batch.ts). */
  readonly #beginWith: Database<Tx>['beginWith']

  constructor(runtime: DeliveryRuntime<Tx>, settings: BatchSettings) {
    this.#runtime = runtime
    this.#settings = settings
    this.#transaction = runtime.database.inboxBatchTransaction?.bind(runtime.database)
    this.#beginWith = runtime.ordering && runtime.database.beginWith?.bind(runtime.database)
    // The channel or the consumer stopped: whatever still waits is left for redelivery.
    runtime.stopping.addEventListener('abort', () => this.#abandon(), { once: true })
  }

  get waiting(): number {
    return this.#pending.length
  }

  get asking(): boolean {
    return this.#asking
  }

  submit(message: ConsumedMessage, control: DeliveryControl): Promise<void> {
    if (this.#runtime.stopping.aborted) return Promise.resolve()
    return new Promise<void>((settled) => {
      this.#pending.push({ message, control, settled })
      this.#ask()
    })
  }

  #abandon(): void {
    const left = this.#pending
    this.#pending = []
    left.forEach((item) => item.settled())
  }

  /** The size of the next batch: as many as fit in the budget at the queue's pace (`batchSize`). */
  #size(): number {
    return batchSize(this.#runtime.pace, this.#settings.budgetMs, this.#settings.max)
  }

  /**
   * Asks for a slot unless one is asked for or forming, or nothing waits. While a batch runs, only
   * when more wait than the next batch will take: those beyond it run alone on free slots meanwhile.
   */
  #ask(): void {
    if (this.#asking || this.#forming || this.#runtime.stopping.aborted) return
    if (this.#pending.length === 0 || (this.#batchRunning && this.#pending.length <= this.#size())) return
    this.#asking = true
    void this.#runtime.slots.acquire(this.#runtime.stopping).then(
      (release) => this.#granted(release),
      () => undefined,
    )
  }

  /**
   * A slot came: wait a turn (and the window) for company, then run the batch or the lone delivery.
   * A slot granted while a batch runs takes one delivery, alone (one batch of a channel at a time).
   */
  async #granted(release: Release | undefined): Promise<void> {
    this.#asking = false
    if (!release) return
    const size = this.#batchRunning ? 1 : this.#size()
    await this.#form(size)
    if (this.#runtime.stopping.aborted) {
      release()
      return
    }
    const batch = this.#take(size)
    const [first] = batch
    if (!first) release()
    else if (batch.length === 1 || !(this.#runtime.ordering ? this.#beginWith : this.#transaction)) {
      // Deliveries that came meanwhile need not wait for this one: ask for another slot now.
      this.#ask()
      void runAlone(first.message, first.control, this.#runtime, release).finally(first.settled)
    } else {
      // An ordered batch takes its keys' turns now, ahead of any later delivery of those keys.
      const ordering = this.#runtime.ordering
      const turns = ordering && batch.map(({ message }) => ordering.turn(message.source, keyOf(message)))
      void this.#runBatch(batch, release, turns)
        .catch((error: unknown) =>
          this.#runtime.logger.error(
            { err: error, handler: this.#runtime.handler.name },
            'batch failed unexpectedly',
          ),
        )
        .finally(() => batch.forEach((item) => item.settled()))
      // The batch is running (`#runBatch` set it before its first await): the deliveries beyond
      // the next batch may take a free slot now.
      this.#ask()
    }
  }

  /** `forming`: one turn of the event loop, and the wait window when two or more (fewer than `size`) wait. */
  async #form(size: number): Promise<void> {
    const { waitMs } = this.#settings
    this.#forming = true
    try {
      if (this.#pending.length < size) await nextTurn()
      if (waitMs > 0 && this.#pending.length >= 2 && this.#pending.length < size) await sleep(waitMs)
    } finally {
      this.#forming = false
    }
  }

  /**
   * Up to `size` waiting deliveries, in delivery order, never two of one message id (an envelope id
   * that differs from the AMQP message id slips past the queue's per-id chains). For an ordered
   * handler never two of one key (a later one waits for the next batch), and a delivery that is
   * not sequenced only alone (it takes the plain inbox path).
   */
  #take(size: number): Waiting[] {
    const batch: Waiting[] = []
    const ids = new Set<string>()
    const rest: Waiting[] = []
    const ordered = this.#runtime.ordering !== undefined
    for (const item of this.#pending) {
      const id = ordered ? orderedId(item) : item.message.id.toLowerCase()
      if (batch.length < size && !ids.has(id) && !(id === '' && batch.length > 0)) {
        ids.add(id)
        batch.push(item)
        if (id === '') size = 1
      } else rest.push(item)
    }
    this.#pending = rest
    return batch
  }

  /**
   * `batchRunning`: one transaction for `batch` (an ordered one once it has its keys' `turns`);
   * settles each delivery, or falls back to one by one.
   */
  async #runBatch(batch: Waiting[], release: Release, turns?: Array<Promise<() => void>>): Promise<void> {
    const runtime = this.#runtime
    this.#batchRunning = true
    const started = performance.now()
    let settled: { fresh: ReadonlySet<string>; next: Waiting[]; rest: Waiting[] } | undefined
    let failure: unknown
    const ends = turns ? await Promise.all(turns) : []
    try {
      settled = turns
        ? await inOrderedTransaction(batch, runtime, this.#beginWith!)
        : { fresh: await inOneTransaction(batch, runtime, this.#transaction!), next: [], rest: [] }
    } catch (error) {
      failure = error
    } finally {
      ends.forEach((end) => end())
      release()
      this.#batchRunning = false
      // What waited meanwhile is the next batch (acks and fallbacks below need no slot).
      this.#ask()
    }
    if (settled) {
      const { fresh, next, rest } = settled
      const durationMs = performance.now() - started
      runtime.counters.batchesTotal += 1
      // Acked in delivery order, each after the COMMIT that holds its effect.
      const left = new Set(rest)
      for (const item of batch) {
        if (left.has(item)) continue
        const { message, control } = item
        settleCommitted(message, control, runtime, fresh.has(message.id.toLowerCase()), durationMs)
      }
      if (fresh.size > 0) runtime.onCommitted()
      for (const { message } of next) runtime.ordering?.release(message)
      await Promise.all(rest.map((item) => runAlone(item.message, item.control, runtime)))
      return
    }
    runtime.counters.batchFallbacksTotal += 1
    if (!runtime.stopping.aborted)
      runtime.logger.warn(
        { err: failure, handler: runtime.handler.name, messages: batch.length },
        'batch transaction rolled back; handling its messages one by one',
      )
    await Promise.all(batch.map((item) => runAlone(item.message, item.control, runtime)))
  }
}

/** The batch's identity of an ordered delivery: its producer and key; '' when it is not sequenced. */
const orderedId = ({ message, control }: Waiting): string =>
  message.ordering && control.original ? keyId(message.source, message.ordering.key) : ''

const keyOf = (message: ConsumedMessage): string => message.ordering?.key ?? ''

/**
 * Runs `runtime`'s handler for one delivery of a batch in `tx`, in its own consumer span, and adds
 * its time to the queue's pace and to `time.handlersMs`. Errors: the handler's.
 */
async function handleInBatch<Tx extends TransactionClient>(
  runtime: DeliveryRuntime<Tx>,
  { message, control }: Waiting,
  tx: Tx,
  time: { handlersMs: number },
): Promise<void> {
  const { handler, pace } = runtime
  const began = performance.now()
  try {
    await inConsumerSpan(handler.name, runtime.queue, message, control.delivery, () =>
      handler.handle(message, tx),
    )
  } finally {
    const ms = performance.now() - began
    time.handlersMs += ms
    pace.record(ms)
  }
}

/** Runs `fn` and records its time beyond the handlers' (`time.handlersMs`) as the queue's overhead. */
async function timed<T>(
  runtime: DeliveryRuntime<TransactionClient>,
  fn: (time: { handlersMs: number }) => Promise<T>,
): Promise<T> {
  const started = performance.now()
  const time = { handlersMs: 0 }
  try {
    return await fn(time)
  } finally {
    runtime.pace.recordOverhead(performance.now() - started - time.handlersMs)
  }
}

/**
 * One inbox transaction for `batch`: the multi-row inbox INSERT, then each new message's handler in
 * lock order, in its own consumer span. Resolves with the ids that were new; throws what the
 * transaction threw (everything rolled back).
 */
function inOneTransaction<Tx extends TransactionClient>(
  batch: readonly Waiting[],
  runtime: DeliveryRuntime<Tx>,
  transaction: NonNullable<Database<Tx>['inboxBatchTransaction']>,
): Promise<ReadonlySet<string>> {
  const ordered = lockOrder(batch)
  const entries = ordered.map(({ message }) => ({ messageId: message.id, handler: runtime.handler.name }))
  return timed(runtime, (time) =>
    transaction(entries, async (tx, inserted) => {
      for (const item of ordered)
        if (inserted.has(item.message.id.toLowerCase())) await handleInBatch(runtime, item, tx, time)
      return inserted
    }),
  )
}

/**
 * One ordered transaction for `batch` (sequenced deliveries, no key twice; inbox/ordering-batch.ts),
 * handlers in lock order. Resolves with the handled ids, the handled deliveries whose key's next
 * delivery is held (`next`), and those left for a transaction of their own (`rest`); throws what
 * the transaction threw (everything rolled back).
 */
async function inOrderedTransaction<Tx extends TransactionClient>(
  batch: readonly Waiting[],
  runtime: DeliveryRuntime<Tx>,
  beginWith: NonNullable<Database<Tx>['beginWith']>,
): Promise<{ fresh: ReadonlySet<string>; next: Waiting[]; rest: Waiting[] }> {
  const { handled, rest } = await timed(runtime, (time) =>
    inOrderBatch(beginWith, runtime.handler.name, lockOrder(batch), (tx, item) =>
      handleInBatch(runtime, item, tx, time),
    ),
  )
  return {
    fresh: new Set(handled.map(({ item }) => item.message.id.toLowerCase())),
    next: handled.filter(({ next }) => next).map(({ item }) => item),
    rest,
  }
}
