import type { Database, HandlerDefinition, MessagingOptions, TransactionClient } from '@saga/messaging'
import type { RecorderDefinition } from '@saga/messaging/parts'
import type pg from 'pg'
import type { BaseServiceConfig, ServiceName } from './env.js'

/** The relay, consumer and readiness settings of `createMessaging`, from the service env. */
export interface MessagingSettings {
  relay: {
    batchSize: number
    /** ms */
    pollIntervalMs: number
    /** ms */
    publishTimeoutMs: number
    maxAttempts: number
    /** The committing process publishes its rows at once (see `RelayOptions.publishOnCommit`). */
    publishOnCommit: boolean
    /** ms */
    retentionMs: number
  }
  consumer: {
    prefetch: number
    maxAttempts: number
    /** Handler transactions at once; undefined lets messaging take 40 % of the pool. */
    concurrency: number | undefined
    /** Deliveries of one queue per transaction; undefined lets messaging take half the prefetch (at most 20). */
    batchMax: number | undefined
    /** Handler time one batch may hold, ms (`Infinity`: by `batchMax` alone). */
    batchBudgetMs: number
  }
  /** The outbox health area is down while its oldest pending row is older than `outboxMaxAgeMs`, ms. */
  health: { outboxMaxAgeMs: number }
}

/**
 * Maps the OUTBOX_*, CONSUMER_* and READY_MAX_OUTBOX_AGE_MS variables to `createMessaging`'s `relay`,
 * `consumer` and `health` options (spread them into the call).
 */
export const messagingSettings = (config: BaseServiceConfig): MessagingSettings => ({
  relay: {
    batchSize: config.OUTBOX_BATCH_SIZE,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
    publishTimeoutMs: config.OUTBOX_PUBLISH_TIMEOUT_MS,
    maxAttempts: config.OUTBOX_MAX_ATTEMPTS,
    publishOnCommit: config.OUTBOX_PUBLISH_ON_COMMIT,
    retentionMs: config.OUTBOX_RETENTION_MS,
  },
  consumer: {
    prefetch: config.CONSUMER_PREFETCH,
    maxAttempts: config.CONSUMER_MAX_ATTEMPTS,
    // Unset: 40 % of the pool, so handler transactions never take every connection from HTTP.
    concurrency: config.CONSUMER_CONCURRENCY,
    batchMax: config.CONSUMER_BATCH_MAX,
    batchBudgetMs: config.CONSUMER_BATCH_BUDGET_MS,
  },
  health: { outboxMaxAgeMs: config.READY_MAX_OUTBOX_AGE_MS },
})

/** What `messagingOptions` needs besides the config: the service and what its db plugin decorated. */
export interface ServiceMessaging<Tx extends TransactionClient> {
  service: ServiceName
  /**
   * How handlers and `messaging.transaction` open transactions. Default `pgDatabase(pool)`, which keeps
   * Prisma off the per-message path (BEGIN and the inbox INSERT, the handler's statements, the outbox
   * INSERTs with COMMIT straight on a pooled pg client; the pool's session limits bound it, see
   * `DEFAULT_SESSION_LIMITS`); `prismaDatabase(app.prisma)` where handlers write through Prisma.
   */
  database?: Database<Tx> | undefined
  /** The pg pool under Prisma (`app.pool`): relay claims, LISTEN, retention. */
  pool: pg.Pool
  /** The service's reactions (src/reactions/index.ts). */
  handlers: ReadonlyArray<HandlerDefinition<Tx>>
  /** Its batch recorders for facts it only records (src/reactions/index.ts). Default none. */
  recorders?: ReadonlyArray<RecorderDefinition>
}

/**
 * The fleet's own names for what messaging leaves neutral: metrics under `saga_messaging_*`, the
 * outbox wake-up on NOTIFY channel `saga_outbox` (every instance of a service must use the same one).
 */
export const FLEET_MESSAGING_NAMES = { metricPrefix: 'saga_messaging', wakeupChannel: 'saga_outbox' } as const

/**
 * `createMessaging`'s options for a service of the fleet (hand them to `@saga/messaging/fastify`'s
 * `messagingPlugin`): the service's `database`, AMQP_URL, AMQP_EXCHANGE, AMQP_QUEUE_PREFIX,
 * `messagingSettings(config)` and the fleet's names (`FLEET_MESSAGING_NAMES`).
 */
export const messagingOptions = <Tx extends TransactionClient>(
  config: BaseServiceConfig,
  { service, database, pool, handlers, recorders }: ServiceMessaging<Tx>,
): MessagingOptions<Tx> => ({
  service,
  queuePrefix: config.AMQP_QUEUE_PREFIX,
  database,
  pool,
  amqpUrl: config.AMQP_URL,
  exchange: config.AMQP_EXCHANGE,
  handlers,
  recorders,
  ...messagingSettings(config),
  relay: {
    ...messagingSettings(config).relay,
    wakeup: { channel: FLEET_MESSAGING_NAMES.wakeupChannel },
  },
  metricPrefix: FLEET_MESSAGING_NAMES.metricPrefix,
})
