import type { AmqpConnection } from '../amqp/connection.js'
import { createSignals, type Signals } from '../signals.js'
import { deadLetterQueueName, declareTopology, queueName } from '../topology.js'
import type { Database, HandlerDefinition, Logger, TransactionClient } from '../types.js'
import type { HandlerCounters } from './handle-delivery.js'
import { createQueueConsumer, type QueueConsumer } from './queue-consumer.js'
import { createSlots } from './slots.js'

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
   * When set, the topology (exchange, queues, dead-letter queues, bindings) is declared on every
   * (re)connect before consuming, so a broker that lost its definitions is repaired. Default: not declared.
   */
  declare?: { exchange: string; deliveryLimit?: number }
  signals?: Signals
  logger?: Logger
  /** Unacked deliveries per handler queue (running, waiting for a slot or for a retry). Default 10. */
  prefetch?: number
  /**
   * Handler transactions running at once across all handler queues of this consumer, each holding a
   * database connection. Keep it below the pool size so routes and the relay still get connections.
   * Deliveries beyond it wait, unacked and outside any transaction, first come first served.
   * Default `DEFAULT_CONSUMER_CONCURRENCY` (4).
   */
  concurrency?: number
  /** Attempts per message in all, the first included, before it is dead-lettered. Default 10. */
  maxAttempts?: number
  /** First retry delay, ms (upper end; the delay is 50-100 % of the step). Doubles per attempt. Default 500. */
  retryBaseMs?: number
  /** Longest retry delay, ms. Default 30,000. */
  retryMaxMs?: number
  /** Longest `stop` waits for running handlers, ms. Default 15,000. */
  drainTimeoutMs?: number
  /** Called after each handler transaction committed; the facade wakes the relay here. */
  onCommitted?: () => void
}

/**
 * Default `concurrency`: 4 handler transactions leave 6 of a 10-connection pool (pg's and
 * service-kit's default) for HTTP requests and the relay's claims.
 */
export const DEFAULT_CONSUMER_CONCURRENCY = 4

/** Per-handler state for health checks. */
export interface ConsumerHealth {
  /** True when every handler queue is being consumed. */
  consuming: boolean
  /** Handler transactions: the limit, running now, deliveries waiting for a slot now. */
  transactions: { limit: number; running: number; waiting: number }
  handlers: Record<string, { queue: string; consuming: boolean; inFlight: number }>
}

/** Counters since start, totals and per handler. */
export interface ConsumerMetrics extends HandlerCounters {
  byHandler: Record<string, HandlerCounters>
}

/** The consumer half of messaging: see `createConsumer`. */
export interface Consumer {
  /** Starts consuming whenever the connection is up (now, and after every reconnect). Never throws. */
  start(): void
  /** Cancels the consumers, waits for running handlers (bounded), closes the channels. Idempotent. */
  stop(): Promise<void>
  health(): ConsumerHealth
  metrics(): ConsumerMetrics
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

const positiveInteger = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`)
  return value
}

/**
 * Creates the consumer: each handler's queue on its own channel with a bounded prefetch. Per delivery:
 * validate (poison is dead-lettered at once with the reason), record `(message_id, handler)` in
 * `inbox_message` and run the handler in one transaction, COMMIT, then ack. A handler that throws is
 * rolled back and retried with capped exponential backoff, then dead-lettered with the error.
 * After a lost connection it consumes again on fresh channels once the connection is back.
 * At most `concurrency` handler transactions run at once over all queues (a FIFO semaphore).
 * Throws `RangeError` for a non-positive `prefetch`, `concurrency` or `maxAttempts`.
 */
export function createConsumer<Tx extends TransactionClient>(options: ConsumerOptions<Tx>): Consumer {
  const { connection, queuePrefix, declare } = options
  const logger = options.logger ?? silent
  const signals = options.signals ?? createSignals()
  const policy = {
    maxAttempts: positiveInteger('maxAttempts', options.maxAttempts ?? 10),
    baseMs: options.retryBaseMs ?? 500,
    maxMs: options.retryMaxMs ?? 30_000,
  }
  const prefetch = positiveInteger('prefetch', options.prefetch ?? 10)
  const slots = createSlots(options.concurrency ?? DEFAULT_CONSUMER_CONCURRENCY)

  async function declareOnce(spec: NonNullable<typeof declare>): Promise<void> {
    const channel = await connection.openChannel(false)
    try {
      await declareTopology(channel, { ...spec, queuePrefix, handlers: options.handlers })
    } finally {
      await channel.close().catch(() => undefined)
    }
  }

  const redeclare = declare ? (): Promise<void> => declareOnce(declare) : undefined
  const queues: QueueConsumer[] = options.handlers.map((handler) => {
    const queue = queueName(queuePrefix, handler.name)
    return createQueueConsumer({
      connection,
      queue,
      deadLetterQueue: deadLetterQueueName(queue),
      prefetch,
      drainTimeoutMs: options.drainTimeoutMs ?? 15_000,
      handler,
      database: options.database,
      policy,
      signals,
      logger,
      onCommitted: options.onCommitted ?? (() => undefined),
      slots,
      redeclare,
    })
  })
  const unsubscribe: Array<() => void> = []
  let started = false
  let stopped: Promise<void> | undefined

  const declareThenConsume = async (): Promise<void> => {
    if (declare) {
      // Consume anyway: a queue declared with other arguments (a policy, an older deploy) still works.
      await declareOnce(declare).catch((error: unknown) =>
        logger.error({ err: error }, 'topology declaration failed'),
      )
    }
    await Promise.all(queues.map((queue) => queue.open()))
  }

  return {
    start() {
      if (started) return
      started = true
      unsubscribe.push(connection.onLost(() => queues.forEach((queue) => queue.lost())))
      unsubscribe.push(connection.onConnected(declareThenConsume))
    },
    stop() {
      stopped ??= (async () => {
        unsubscribe.forEach((off) => off())
        await Promise.all(queues.map((queue) => queue.stop()))
      })()
      return stopped
    },
    health() {
      const handlers: ConsumerHealth['handlers'] = {}
      options.handlers.forEach((handler, index) => {
        const queue = queues[index] as QueueConsumer
        handlers[handler.name] = {
          queue: queue.queue,
          consuming: queue.consuming,
          inFlight: queue.counters.inFlight,
        }
      })
      return {
        consuming: queues.every((queue) => queue.consuming),
        transactions: { limit: slots.limit, running: slots.running, waiting: slots.waiting },
        handlers,
      }
    },
    metrics() {
      const total: HandlerCounters = {
        handledTotal: 0,
        duplicatesTotal: 0,
        retriedTotal: 0,
        deadLetteredTotal: 0,
        inFlight: 0,
      }
      const byHandler: Record<string, HandlerCounters> = {}
      options.handlers.forEach((handler, index) => {
        const counters = { ...(queues[index] as QueueConsumer).counters }
        byHandler[handler.name] = counters
        for (const key of Object.keys(total) as Array<keyof HandlerCounters>) total[key] += counters[key]
      })
      return { ...total, byHandler }
    },
  }
}
