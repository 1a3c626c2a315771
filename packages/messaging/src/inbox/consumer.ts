import { positiveInteger } from '../errors.js'
import type { AmqpConnection } from '../amqp/connection.js'
import { createSignals, type Signals } from '../signals.js'
import { deadLetterQueueName, declareTopology, queueName } from '../topology.js'
import type { Database, HandlerDefinition, Logger, TransactionClient } from '../types.js'
import type { HandlerCounters } from './handle-delivery.js'
import type { BatchSettings } from './batch.js'
import { DEFAULT_BATCH_BUDGET_MS } from './batch-size.js'
import { noCounters } from './counters.js'
import { createHandlerQueue, type HandlerQueue } from './handler-queue.js'
import { createSlots, type Slots } from './slots.js'
import { checkUpcasts } from './versions.js'
import { DEFAULT_ORDERING, type OrderingSettings } from './ordering.js'

/** Options of `createConsumer`. Durations in milliseconds. */
export interface ConsumerOptions<Tx extends TransactionClient> {
  /** The AMQP connection to consume on (not shared with the relay's publishing); the caller starts and closes it. */
  connection: AmqpConnection
  /** Opens the inbox transactions handlers run in. */
  database: Database<Tx>
  handlers: ReadonlyArray<HandlerDefinition<Tx>>
  /** Queues are `<queuePrefix>.<handler name>`; usually the service name. */
  queuePrefix: string
  /**
   * When set, each handler's topology (exchange, queue, dead-letter queue, binding) is declared before
   * every consume, so lost definitions or a deleted queue are repaired. Default: not declared.
   */
  declare?: { exchange: string; deliveryLimit?: number }
  signals?: Signals
  logger?: Logger
  /** Unacked deliveries per handler queue (running, waiting for a slot or a retry). Default 40 (`DEFAULT_PREFETCH`). */
  prefetch?: number
  /**
   * Most deliveries of one handler queue in one transaction (inbox/batch.ts): those waiting when a
   * slot frees share one BEGIN, inbox INSERT and COMMIT; a lone delivery never waits for company.
   * Needs `inboxBatchTransaction` (`pgDatabase`); 1 turns batching off. `prefetch` must be at least
   * twice this. Default half the prefetch, at most 20 (`DEFAULT_BATCH_MAX`).
   */
  batchMax?: number
  /**
   * Handler time one batch transaction may hold, ms: a batch takes as many waiting deliveries as fit
   * at the queue's average handler time, or in ten transactions' overhead when that is more
   * (`batchSize`, inbox/batch-size.ts). An untimed handler, or one slower than half of it, runs
   * alone, one per transaction on the free slots, as with `batchMax: 1`. `Infinity` sizes batches by
   * `batchMax` alone. Must be more than 0. Default 20 (`DEFAULT_BATCH_BUDGET_MS`).
   */
  batchBudgetMs?: number
  /**
   * How long a transaction slot waits for more deliveries before it starts a batch, when two or
   * more (and fewer than `batchMax`) wait, ms. Never waits for a lone delivery. Default 0.
   */
  batchWaitMs?: number
  /**
   * Handler transactions at once across all handler queues, each holding a database connection:
   * keep it below the pool size. Deliveries beyond it wait unacked, first come first served.
   * Default `DEFAULT_CONSUMER_CONCURRENCY` (4).
   */
  concurrency?: number
  /** Attempts per message in all, the first included, before it is dead-lettered. Default 10. */
  maxAttempts?: number
  /** First retry delay, ms (upper end; the delay is 50-100 % of the step). Doubles per attempt. Default 500. */
  retryBaseMs?: number
  /** Longest retry delay, ms. Default 30,000. */
  retryMaxMs?: number
  /** How long a message may fail for transient database reasons without spending attempts, ms. Default 300,000. */
  transientRetryMaxMs?: number
  /** Longest `stop` waits for running handlers, ms. Default 15,000. */
  drainTimeoutMs?: number
  /** Called after each handler transaction committed; the facade wakes the relay here. */
  onCommitted?: () => void
  /**
   * Per-key order of handlers with `ordering: 'per-key'` (README, "Per-key order"), ms: `sweepMs`
   * (5,000) how often held deliveries whose predecessor is done are put back and blocked keys and
   * gaps counted; `gapAfterMs` (300,000) when a held delivery's missing predecessor is reported;
   * `putBackAgainMs` (30,000) when a copy put back but not yet handled is put back again;
   * `startSettleMs` (30,000) how long a key first seen above sequence 1 holds its deliveries before
   * its order starts at the lowest held one.
   */
  ordering?: Partial<OrderingSettings>
}

/**
 * Default `concurrency`: 4 handler transactions leave 6 of a 10-connection pool (pg's and
 * service-kit's default) for HTTP requests and the relay's claims.
 */
export const DEFAULT_CONSUMER_CONCURRENCY = 4

/** Unacked deliveries per handler queue when `prefetch` is not set. */
export const DEFAULT_PREFETCH = 40

/** Most deliveries per transaction when `batchMax` is not set: half the prefetch, at most this. */
export const DEFAULT_BATCH_MAX = 20

/**
 * `batchMax` checked against `prefetch`, or its default; 1 where `database` cannot batch.
 * @throws RangeError when `batchMax` is not a positive integer or exceeds half the prefetch, when
 * `batchBudgetMs` is not more than 0, or when `batchWaitMs` is negative
 */
function batchSettings<Tx extends TransactionClient>(
  options: ConsumerOptions<Tx>,
  prefetch: number,
): BatchSettings {
  const waitMs = options.batchWaitMs ?? 0
  if (!(waitMs >= 0)) throw new RangeError(`batchWaitMs must be at least 0, got ${waitMs}`)
  const budgetMs = options.batchBudgetMs ?? DEFAULT_BATCH_BUDGET_MS
  if (!(budgetMs > 0)) throw new RangeError(`batchBudgetMs must be more than 0, got ${budgetMs}`)
  const requested = options.batchMax
  if (requested !== undefined) {
    positiveInteger('batchMax', requested)
    if (requested > 1 && prefetch < 2 * requested)
      throw new RangeError(
        `prefetch (${prefetch}) must be at least twice batchMax (${requested}), so the next batch fills while one runs`,
      )
  }
  const max = requested ?? Math.max(1, Math.min(DEFAULT_BATCH_MAX, Math.floor(prefetch / 2)))
  return { max: options.database.inboxBatchTransaction ? max : 1, budgetMs, waitMs }
}

/** Per-handler state for health checks. */
export interface ConsumerHealth {
  /** True when every handler queue is being consumed. */
  consuming: boolean
  /** Handler transactions: the limit, running now, deliveries waiting for a slot now. */
  transactions: { limit: number; running: number; waiting: number }
  /** `held`: deliveries of a newer version than the handler's held now (inbox/versions.ts). */
  handlers: Record<string, { queue: string; consuming: boolean; inFlight: number; held: number }>
}

/** Counters since start, totals and per handler. */
export interface ConsumerMetrics extends HandlerCounters {
  byHandler: Record<string, HandlerCounters>
}

/** The consumer half of messaging: see `createConsumer`. */
export interface Consumer {
  /** One per handler, in the order of `handlers`. */
  readonly queues: readonly HandlerQueue[]
  /** Starts consuming whenever the connection is up (now, and after every reconnect). Never throws. */
  start(): void
  /** Cancels the consumers, waits for running handlers (bounded), closes the channels. Idempotent. */
  stop(): Promise<void>
  health(): ConsumerHealth
  metrics(): ConsumerMetrics
}

/** The logger used when none is given: it drops everything. */
export const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * Creates the consumer: each handler's queue on its own channel with a bounded prefetch. Per delivery:
 * validate (poison is dead-lettered at once with the reason), record `(message_id, handler)` in
 * `inbox_message` and run the handler in one transaction, COMMIT, then ack. A handler that throws is
 * rolled back and retried with capped exponential backoff, then dead-lettered with the error. At
 * most `concurrency` handler transactions run at once over all queues; under load a queue's waiting
 * deliveries share one (`batchMax`, `batchBudgetMs`). Consumes again after a lost connection.
 * @throws TopologyError for a handler's bad `upcasts` (`checkUpcasts`); RangeError for a non-positive
 * `prefetch`, `concurrency`, `maxAttempts` or `batchBudgetMs`, or a `batchMax` above half the prefetch
 */
export function createConsumer<Tx extends TransactionClient>(options: ConsumerOptions<Tx>): Consumer {
  const { connection, queuePrefix, declare } = options
  const prefetch = positiveInteger('prefetch', options.prefetch ?? DEFAULT_PREFETCH)
  const shared = {
    connection,
    prefetch,
    batch: batchSettings(options, prefetch),
    drainTimeoutMs: options.drainTimeoutMs ?? 15_000,
    database: options.database,
    policy: {
      maxAttempts: positiveInteger('maxAttempts', options.maxAttempts ?? 10),
      baseMs: options.retryBaseMs ?? 500,
      maxMs: options.retryMaxMs ?? 30_000,
      transientMaxMs: options.transientRetryMaxMs ?? 300_000,
    },
    signals: options.signals ?? createSignals(),
    logger: options.logger ?? silent,
    onCommitted: options.onCommitted ?? (() => undefined),
    slots: createSlots(options.concurrency ?? DEFAULT_CONSUMER_CONCURRENCY),
    orderingSettings: { ...DEFAULT_ORDERING, ...options.ordering },
  }
  options.handlers.forEach(checkUpcasts)
  const queues = options.handlers.map((handler) => {
    const queue = queueName(queuePrefix, handler.name)
    const spec = declare && { ...declare, queuePrefix, handlers: [handler] }
    return createHandlerQueue({
      ...shared,
      handler,
      queue,
      deadLetterQueue: deadLetterQueueName(queue),
      declare: spec && ((channel) => declareTopology(channel, spec)),
    })
  })
  let stopped: Promise<void> | undefined

  return {
    queues,
    start: () => queues.forEach((queue) => queue.start()),
    stop() {
      stopped ??= Promise.all(queues.map((queue) => queue.stop())).then(() => undefined)
      return stopped
    },
    health: () => consumerHealth(queues, options.handlers, shared.slots),
    metrics() {
      const total = noCounters()
      const byHandler: Record<string, HandlerCounters> = {}
      options.handlers.forEach((handler, index) => {
        const counters = { ...(queues[index] as HandlerQueue).counters }
        byHandler[handler.name] = counters
        for (const key of Object.keys(total) as Array<keyof HandlerCounters>) total[key] += counters[key]
      })
      return { ...total, byHandler }
    },
  }
}

/** The consumer's health from its queues and the slots they share. */
function consumerHealth(
  queues: readonly HandlerQueue[],
  handlers: ReadonlyArray<{ name: string }>,
  slots: Slots,
): ConsumerHealth {
  const byHandler: ConsumerHealth['handlers'] = {}
  handlers.forEach((handler, index) => {
    const queue = queues[index] as HandlerQueue
    byHandler[handler.name] = {
      queue: queue.queue,
      consuming: queue.channel.consuming,
      inFlight: queue.counters.inFlight,
      held: queue.counters.held,
    }
  })
  // A batcher waits in the slots' queue once for all its deliveries: count the deliveries.
  let waiting = slots.waiting
  for (const { batched } of queues) waiting += batched.waiting - (batched.asking ? 1 : 0)
  return {
    consuming: queues.every((queue) => queue.channel.consuming),
    transactions: { limit: slots.limit, running: slots.running, waiting: Math.max(0, waiting) },
    handlers: byHandler,
  }
}
