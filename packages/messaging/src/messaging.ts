import pg from 'pg'
import { createAmqpConnection, type AmqpConnection } from './amqp/connection.js'
import { pgDatabase } from './database.js'
import { createConsumer, silent, type Consumer, type ConsumerOptions } from './inbox/consumer.js'
import { createInboxRetention } from './inbox/inbox-retention.js'
import { messagingHealth, type HealthSettings, type MessagingHealth } from './observability/health.js'
import { messagingMetrics, type MetricDescriptor } from './observability/metrics.js'
import { messagingStats, type MessagingParts, type MessagingStats } from './observability/parts.js'
import { createRelay, type Relay, type RelayOptions } from './outbox/relay.js'
import { createBatchRecorder, type BatchRecorder } from './recorder/recorder.js'
import type { RecorderDefinition } from './recorder/types.js'
import { createSignals, type Signals } from './signals.js'
import { topologyDefinitions } from './topology.js'
import type { Database, HandlerDefinition, Logger, TransactionClient } from './types.js'

/** Relay settings of `createMessaging` (see `createRelay` for each default). */
export type MessagingRelayOptions = Omit<
  RelayOptions,
  'pool' | 'amqpUrl' | 'exchange' | 'service' | 'logger' | 'signals'
> & {
  /**
   * Run the relay in this process. Default true. `false`: no relay connection, nothing read of the
   * outbox, for a service that never enqueues or whose rows another process publishes; inbox
   * retention then runs on its own timer (`retentionIntervalMs`, `inboxRetentionMs`).
   */
  enabled?: boolean
}

/**
 * Consumer settings of `createMessaging`: `createConsumer`'s tuning, documented on `ConsumerOptions`
 * (durations in milliseconds), plus what the facade decides itself.
 */
export interface MessagingConsumerOptions extends Pick<
  ConsumerOptions<TransactionClient>,
  | 'prefetch'
  | 'batchMax'
  | 'batchBudgetMs'
  | 'batchWaitMs'
  | 'maxAttempts'
  | 'retryBaseMs'
  | 'retryMaxMs'
  | 'transientRetryMaxMs'
  | 'drainTimeoutMs'
  | 'ordering'
> {
  /** Consume in this process (when there are handlers or recorders). Default true. */
  enabled?: boolean
  /** Handler transactions at once (each holds a connection). Default 40 % of `pool`'s `max`, at least 1. */
  concurrency?: number
  /** Quorum-queue `x-delivery-limit`, the broker's backstop against crash loops. Default 20. */
  deliveryLimit?: number
}

/** Options of `createMessaging`. */
export interface MessagingOptions<Tx extends TransactionClient = pg.PoolClient> {
  /** The service name: CloudEvents `source`, AMQP `appId`, connection names. */
  service: string
  /** A pg Pool on the service's database (relay claims, LISTEN/NOTIFY, retention, stats). Stays the caller's. */
  pool: pg.Pool
  /**
   * How handlers and `messaging.transaction` open transactions. Default `pgDatabase(pool)`;
   * `prismaDatabase(prisma)` where handlers write through Prisma.
   */
  database?: Database<Tx>
  /** `amqp://user:pass@host:5672/vhost`. */
  amqpUrl: string
  /** Durable topic exchange of domain events. Default `events`. */
  exchange?: string
  /** Queues are `<queuePrefix>.<handler name>`. Default `service`. */
  queuePrefix?: string
  /** What this service consumes; one queue each. Default none. */
  handlers?: ReadonlyArray<HandlerDefinition<Tx>>
  /**
   * Batch recorders for facts this service only records (no decision): one queue each, many
   * deliveries per statement on `pool`, no inbox transaction (see README, "Batch recorder"). Default none.
   */
  recorders?: ReadonlyArray<RecorderDefinition>
  /** pino or anything with debug/info/warn/error(obj, msg). Default silent. */
  logger?: Logger
  relay?: MessagingRelayOptions
  consumer?: MessagingConsumerOptions
  /** Thresholds of `health()`: outbox age 60,000 ms, consumer stuck 60,000 ms by default. */
  health?: Partial<HealthSettings>
  /** Prefix of every metric name in `metrics`. Default `messaging`. */
  metricPrefix?: string
  /** Longest `start()` waits for the broker before returning anyway (it keeps connecting), ms. Default 3,000. */
  startWaitMs?: number
}

/** The per-service facade: see `createMessaging`. */
export interface Messaging<Tx extends TransactionClient = pg.PoolClient> {
  /** published, publishFailed, parked, handled, duplicate, retrying, deadLettered. */
  readonly signals: Signals
  /**
   * Starts the relay and the consumers (declaring each queue before it is consumed). Never throws
   * because the broker is down: it waits at most `startWaitMs`, then keeps connecting in the background.
   */
  start(): Promise<void>
  /** Runs `fn` in a transaction (commit on resolve, rollback on throw), then wakes the relay. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /** Health by area (broker, outbox, consumer): synchronous and cheap. */
  health(): MessagingHealth
  /** The metric descriptors to register once with a metrics host; each reads its value at a scrape. */
  readonly metrics: readonly MetricDescriptor[]
  /** Every counter and gauge now, as one typed object. */
  stats(): MessagingStats
  /**
   * Stops consuming, lets running handlers finish (bounded), stops the relay after its batch, closes
   * every channel and connection. The pg pool is the caller's to end afterwards. Idempotent.
   */
  stop(): Promise<void>
}

// pg.Pool's own default `max` (https://node-postgres.com/apis/pool).
const PG_POOL_DEFAULT_MAX = 10

/** 40 % of the pool for handler transactions, at least 1: the rest stays free for routes and the relay. */
const defaultConcurrency = (pool: pg.Pool): number =>
  Math.max(1, Math.floor((pool.options.max ?? PG_POOL_DEFAULT_MAX) * 0.4))

/** The relay of `options`, or undefined when it is turned off. */
function relayOf<Tx extends TransactionClient>(
  options: MessagingOptions<Tx>,
  exchange: string,
  signals: Signals,
): Relay | undefined {
  const { enabled = true, ...settings } = options.relay ?? {}
  if (!enabled) return undefined
  const { pool, amqpUrl, service, logger } = options
  return createRelay({ ...settings, pool, amqpUrl, exchange, service, logger, signals })
}

/** The consumer side of `options`: one connection for the handler queues and the recorders. */
function consumersOf<Tx extends TransactionClient>(
  options: MessagingOptions<Tx>,
  exchange: string,
  signals: Signals,
  onCommitted: () => void,
): { connection?: AmqpConnection; consumer?: Consumer; recorders: BatchRecorder[] } {
  const { enabled = true, deliveryLimit, ...settings } = options.consumer ?? {}
  const handlers = options.handlers ?? []
  const definitions = options.recorders ?? []
  if (!enabled || (handlers.length === 0 && definitions.length === 0)) return { recorders: [] }
  const logger = options.logger ?? silent
  const queuePrefix = options.queuePrefix ?? options.service
  const connection = createAmqpConnection({
    url: options.amqpUrl,
    name: `${options.service}-consumer`,
    logger,
  })
  const recorders = definitions.map((definition) =>
    createBatchRecorder({
      definition,
      connection,
      db: options.pool,
      exchange,
      queuePrefix,
      signals,
      logger,
      deliveryLimit,
    }),
  )
  const consumer =
    handlers.length === 0
      ? undefined
      : createConsumer({
          ...settings,
          concurrency: settings.concurrency ?? defaultConcurrency(options.pool),
          connection,
          database: options.database ?? (pgDatabase(options.pool) as unknown as Database<Tx>),
          handlers,
          queuePrefix,
          declare: { exchange, deliveryLimit },
          signals,
          logger,
          onCommitted,
        })
  return { connection, consumer, recorders }
}

/**
 * Creates the messaging of one service: outbox relay, inbox consumers, batch recorders, their health
 * and metrics. Example: `const messaging = createMessaging({ service: 'inventory', pool, amqpUrl,
 * handlers })`, `await messaging.start()`, then `await messaging.transaction(async (tx) => enqueue(tx, event))`.
 * @throws TopologyError when a handler or recorder name is not kebab-case or is used twice.
 * @throws RangeError for a consumer setting out of range (see `createConsumer`).
 */
export function createMessaging<Tx extends TransactionClient = pg.PoolClient>(
  options: MessagingOptions<Tx>,
): Messaging<Tx> {
  const logger = options.logger ?? silent
  const exchange = options.exchange ?? 'events'
  const queuePrefix = options.queuePrefix ?? options.service
  // Refuses bad handler and recorder names now, not at the first connect.
  topologyDefinitions({
    exchange,
    queuePrefix,
    handlers: options.handlers ?? [],
    recorders: options.recorders,
  })
  const signals = createSignals()
  const settings: HealthSettings = { outboxMaxAgeMs: 60_000, consumerStuckAfterMs: 60_000, ...options.health }
  const relay = relayOf({ ...options, logger }, exchange, signals)
  const wake = (): void => relay?.wake()
  // The default database hands its committed rows to the relay (publish on commit), which wakes
  // itself for any it does not take; a database of the caller's leaves them to the relay's claim.
  const database =
    options.database ?? (pgDatabase(options.pool, { committed: relay?.committed }) as unknown as Database<Tx>)
  const afterCommit = options.database ? wake : (): void => undefined
  const side = consumersOf({ ...options, logger, database }, exchange, signals, afterCommit)
  // Without the relay, whose housekeeping deletes expired inbox rows, a process with handlers runs
  // inbox retention on its own timer: `relay.retentionIntervalMs` (0: off), `relay.inboxRetentionMs`.
  const inboxRetention =
    relay || !side.consumer
      ? undefined
      : createInboxRetention({
          pool: options.pool,
          logger,
          intervalMs: options.relay?.retentionIntervalMs ?? 10_000,
          inboxRetentionMs: options.relay?.inboxRetentionMs,
        })
  const parts: MessagingParts = {
    relay,
    consumer: side.consumer,
    recorders: side.recorders,
    consumerConnection: side.connection,
  }
  const health = (): MessagingHealth => messagingHealth(parts, settings)
  const stats = (): MessagingStats => messagingStats(parts)
  const metrics = messagingMetrics(options.metricPrefix ?? 'messaging', {
    stats,
    health,
    signals,
    recorders: side.recorders.length > 0,
  })
  let stopping: Promise<void> | undefined

  return {
    signals,
    start: () => {
      inboxRetention?.start()
      return startAll(parts, health, logger, options.startWaitMs ?? 3_000)
    },
    async transaction(fn) {
      const result = await database.transaction(fn)
      afterCommit()
      return result
    },
    health,
    metrics,
    stats,
    stop() {
      // Consumers first: their handlers may still enqueue rows and wake the relay.
      stopping ??= (async () => {
        await inboxRetention?.stop()
        await Promise.all([side.consumer?.stop(), ...side.recorders.map((recorder) => recorder.stop())])
        await side.connection?.close()
        await relay?.stop()
      })()
      return stopping
    },
  }
}

/**
 * Starts the relay, the queue channels and the consumer connection, then waits (at most `waitMs`)
 * until the broker is up and every queue is consumed; a broker that is down only delays it.
 */
async function startAll(
  parts: MessagingParts,
  health: () => MessagingHealth,
  logger: Logger,
  waitMs: number,
): Promise<void> {
  await parts.relay?.start()
  parts.consumer?.start()
  parts.recorders.forEach((recorder) => recorder.start())
  parts.consumerConnection?.start()
  const deadline = Date.now() + waitMs
  const ready = (): boolean => health().areas.every((a) => a.area === 'outbox' || a.ok)
  while (Date.now() < deadline && !ready()) await new Promise((resolve) => setTimeout(resolve, 20))
  const broker = health().areas.find((a) => a.area === 'broker')
  if (broker && !broker.ok)
    logger.warn({ broker: broker.detail }, 'messaging started without the broker; still connecting')
}
