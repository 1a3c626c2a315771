import type pg from 'pg'
import type { Signals } from '../signals.js'
import type { Logger } from '../types.js'

/** Options of `createRelay`; every duration in ms. */
export interface RelayOptions {
  /** Pool on the service database (claims, LISTEN/NOTIFY, retention, stats). Stays the caller's. */
  pool: pg.Pool
  /** Broker URL; the relay opens its own connection (publishers apart from consumers, as RabbitMQ advises). */
  amqpUrl: string
  /** Topic exchange to publish to, e.g. `events`. */
  exchange: string
  /** Producing service: CloudEvents `source`, AMQP `appId`, connection name. */
  service: string
  logger?: Logger
  /** Where published/publishFailed/parked are emitted; default a new hub (see `relay.signals`). */
  signals?: Signals
  /** Rows per claim. Default 100. */
  batchSize?: number
  /** Safety-net poll when no wake-up comes. Default 1,000. */
  pollIntervalMs?: number
  /** Longest wait for a batch's confirms; also bounds the claim transaction. Default 5,000. */
  publishTimeoutMs?: number
  /**
   * Attempts after which a poison row (one amqplib cannot encode) is parked. Default 10. Unroutable
   * rows count attempts (growing their backoff) but are never parked; link failures and nacks spend
   * none (see `PublishFailure`).
   */
  maxAttempts?: number
  /** First retry delay of a failed row. Default 1,000. */
  backoffBaseMs?: number
  /** Longest retry delay of a failed row. Default 60,000. */
  backoffMaxMs?: number
  /** Published rows older than this are deleted. Default 3,600,000 (1 h). */
  retentionMs?: number
  /** How often retention runs. Default 10,000; 0 turns retention off. */
  retentionIntervalMs?: number
  /** Inbox rows older than this are deleted. Default 7 days. */
  inboxRetentionMs?: number
  /**
   * VACUUM the outbox (on the retention timer) once this many rows were marked or deleted since the
   * last one. Default 10,000; 0 leaves it to autovacuum. See `vacuumOutbox` for why.
   */
  vacuumAfterRows?: number
  /**
   * How often pending count and oldest age are read (the parked count every 10th time), and whenever
   * the relay drained what it found. Default 1,000.
   */
  statsIntervalMs?: number
  /** Declare the exchange (topic, durable) on each new channel, so a missing one is remade. Default true. */
  declareExchange?: boolean
  /**
   * Publish on commit (`CommitPublisher`): this process publishes the rows its `pgDatabase`
   * transactions commit; the relay sweeps what that leaves once the hold (publish timeout + 5 s)
   * passed. Default true.
   */
  publishOnCommit?: boolean
  /** Cross-instance wake-up (see `createCrossInstanceWakeup`). Default on. */
  wakeup?: { listen?: boolean; notify?: boolean; channel?: string; windowMs?: number }
  /** AMQP heartbeat in s (default 10) and connect timeout in ms (default 5,000). */
  amqp?: { heartbeatS?: number; connectTimeoutMs?: number }
}
