import type pg from 'pg'
import { createAmqpConnection, type AmqpConnection } from './amqp/connection.js'
import { createConsumer, type Consumer } from './inbox/consumer.js'
import { createRelay, type Relay, type RelayOptions } from './outbox/relay.js'
import { createBatchRecorder, type BatchRecorder } from './recorder/recorder.js'
import type { RecorderDefinition } from './recorder/types.js'
import {
  messagingHealth,
  messagingMetrics,
  type MessagingHealth,
  type MessagingMetrics,
} from './messaging-health.js'
import { createSignals, type Signals } from './signals.js'
import type { Database, HandlerDefinition, Logger, TransactionClient } from './types.js'

export type { MessagingHealth, MessagingMetrics } from './messaging-health.js'

/** Relay settings of `createMessaging` (see `createRelay` for each default). */
export type MessagingRelayOptions = Omit<
  RelayOptions,
  'pool' | 'amqpUrl' | 'exchange' | 'service' | 'logger' | 'signals'
> & {
  /** Run the relay in this process. Default true. */
  enabled?: boolean
}

/** Consumer settings of `createMessaging`. Durations in milliseconds. */
export interface MessagingConsumerOptions {
  /** Consume in this process (when there are handlers). Default true. */
  enabled?: boolean
  /** Unacked deliveries per handler queue (running, waiting for a slot or for a retry). Default 40. */
  prefetch?: number
  /**
   * Most deliveries of one handler queue in one transaction, under load (see `createConsumer`).
   * At most half the prefetch; 1 turns batching off. Default half the prefetch, at most 20.
   */
  batchMax?: number
  /** Wait for more deliveries before a batch starts, when two or more wait, ms. Default 0. */
  batchWaitMs?: number
  /**
   * Handler transactions at once across all handlers of this instance (each holds a connection).
   * Default 40 % of `pool`'s `max`, at least 1: 4 of a 10-connection pool, leaving the rest to
   * routes and the relay (see README "Sizing").
   */
  concurrency?: number
  /** Attempts per message, the first included, before dead-lettering. Default 10. */
  maxAttempts?: number
  /** First retry delay, ms (upper end of the jittered step), doubling per attempt. Default 500. */
  retryBaseMs?: number
  /** Longest retry delay, ms. Default 30,000. */
  retryMaxMs?: number
  /** Longest `stop` waits for running handlers, ms. Default 15,000. */
  drainTimeoutMs?: number
  /** Quorum-queue `x-delivery-limit`, the broker's backstop against crash loops. Default 20. */
  deliveryLimit?: number
}

/** Options of `createMessaging`. */
export interface MessagingOptions<Tx extends TransactionClient> {
  /** The service name: CloudEvents `source`, AMQP `appId`, connection names. */
  service: string
  /** How handlers and `messaging.transaction` open transactions: `prismaDatabase(prisma)` or `pgDatabase(pool)`. */
  database: Database<Tx>
  /** A pg Pool on the same database (relay claims, LISTEN/NOTIFY, retention, stats). Stays the caller's. */
  pool: pg.Pool
  /** `amqp://user:pass@host:5672/vhost`. */
  amqpUrl: string
  /** Durable topic exchange of domain events. Default `saga.events`. */
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
  /** `health().ready` turns false when the oldest pending outbox row is older than this, ms. Default 60,000. */
  readyMaxOutboxAgeMs?: number
  /** Longest `start()` waits for the broker before returning anyway (it keeps connecting), ms. Default 3,000. */
  startWaitMs?: number
}

/** The per-service facade: see `createMessaging`. */
export interface Messaging<Tx extends TransactionClient = TransactionClient> {
  /** published, publishFailed, parked, handled, duplicate, retrying, deadLettered. */
  readonly signals: Signals
  /**
   * Starts the relay and the consumers (declaring the topology on every connect). Never throws
   * because the broker is down: it waits at most `startWaitMs`, then keeps connecting in the background.
   */
  start(): Promise<void>
  /** Runs `fn` in a transaction (commit on resolve, rollback on throw), then wakes the relay. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  health(): MessagingHealth
  metrics(): MessagingMetrics
  /**
   * Stops consuming, lets running handlers finish (bounded), stops the relay after its batch, closes
   * every channel and connection. The pg pool is the caller's to end afterwards. Idempotent.
   */
  stop(): Promise<void>
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

// pg.Pool's own default `max` (https://node-postgres.com/apis/pool).
const PG_POOL_DEFAULT_MAX = 10

/** 40 % of the pool for handler transactions, at least 1: the rest stays free for routes and the relay. */
const defaultConcurrency = (pool: pg.Pool): number =>
  Math.max(1, Math.floor((pool.options.max ?? PG_POOL_DEFAULT_MAX) * 0.4))

/**
 * Creates the messaging of one service: outbox relay, inbox consumers, topology, health and metrics.
 * Example:
 * `const messaging = createMessaging({ service: 'inventory', database: prismaDatabase(prisma), pool, amqpUrl, handlers })`,
 * then `await messaging.start()`; in a route `await messaging.transaction(async (tx) => { ...; await enqueue(tx, event) })`.
 */
export function createMessaging<Tx extends TransactionClient>(options: MessagingOptions<Tx>): Messaging<Tx> {
  const logger = options.logger ?? silent
  const exchange = options.exchange ?? 'saga.events'
  const signals = createSignals()
  const { enabled: relayEnabled = true, ...relaySettings } = options.relay ?? {}
  const { enabled: consumerEnabled = true, deliveryLimit, ...consumerSettings } = options.consumer ?? {}
  const handlers = options.handlers ?? []
  const recorderDefinitions = options.recorders ?? []
  const readyMaxOutboxAgeMs = options.readyMaxOutboxAgeMs ?? 60_000

  const relay: Relay | undefined = relayEnabled
    ? createRelay({
        ...relaySettings,
        pool: options.pool,
        amqpUrl: options.amqpUrl,
        exchange,
        service: options.service,
        logger,
        signals,
      })
    : undefined
  const wake = (): void => relay?.wake()

  let consumerConnection: AmqpConnection | undefined
  let consumer: Consumer | undefined
  let recorders: BatchRecorder[] = []
  if (consumerEnabled && (handlers.length > 0 || recorderDefinitions.length > 0)) {
    consumerConnection = createAmqpConnection({
      url: options.amqpUrl,
      name: `${options.service}-consumer`,
      logger,
    })
    const connection = consumerConnection
    recorders = recorderDefinitions.map((definition) =>
      createBatchRecorder({
        definition,
        connection,
        db: options.pool,
        exchange,
        queuePrefix: options.queuePrefix ?? options.service,
        signals,
        logger,
        deliveryLimit,
      }),
    )
  }
  if (consumerConnection && handlers.length > 0) {
    consumer = createConsumer({
      ...consumerSettings,
      concurrency: consumerSettings.concurrency ?? defaultConcurrency(options.pool),
      connection: consumerConnection,
      database: options.database,
      handlers,
      queuePrefix: options.queuePrefix ?? options.service,
      declare: { exchange, deliveryLimit },
      signals,
      logger,
      onCommitted: wake,
    })
  }
  let stopping: Promise<void> | undefined

  const health = (): MessagingHealth =>
    messagingHealth({ relay, consumer, recorders, consumerConnection, readyMaxOutboxAgeMs })

  return {
    signals,
    async start() {
      await relay?.start()
      consumer?.start()
      recorders.forEach((recorder) => recorder.start())
      consumerConnection?.start()
      const deadline = Date.now() + (options.startWaitMs ?? 3_000)
      // Bounded wait so a healthy start returns with queues declared and consumers attached; a broker
      // that is down only delays start, health() says so, and connecting goes on in the background.
      const consuming = (): boolean =>
        (consumer?.health().consuming ?? true) && recorders.every((recorder) => recorder.consuming)
      while (Date.now() < deadline && !(health().broker && consuming())) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (!health().broker)
        logger.warn({ problems: health().problems }, 'messaging started without the broker; still connecting')
    },
    async transaction(fn) {
      const result = await options.database.transaction(fn)
      wake()
      return result
    },
    health,
    metrics: () => messagingMetrics({ relay, consumer, recorders, consumerConnection }),
    stop() {
      // Consumers first: their handlers may still enqueue rows and wake the relay.
      stopping ??= (async () => {
        await Promise.all([consumer?.stop(), ...recorders.map((recorder) => recorder.stop())])
        await consumerConnection?.close()
        await relay?.stop()
      })()
      return stopping
    },
  }
}
