import type { BrokerNode } from '../amqp/broker-addresses.js'
import { createAmqpConnection, type AmqpConnection } from '../amqp/connection.js'
import { createSignals, type Signals } from '../signals.js'
import { brokerAddress } from '../tracing.js'
import type { BatchResult, BatchSettings } from './batch.js'
import { createHousekeeping, type Housekeeping } from './housekeeping.js'
import { runPublishLoop } from './publish-loop.js'
import type { RelayOptions } from './relay-options.js'
import type { RetentionResult } from './retention.js'
import { idleRelayStats, type RelayStats } from './stats.js'
import { createCrossInstanceWakeup, Waker, type CrossInstanceWakeup } from './wakeup.js'
import type { CommittedRow, CommittedRowSink } from '../database.js'
import { COMMIT_HOLD_MARGIN_MS, CommitPublisher } from './commit-publisher.js'

/** The outbox relay; see `createRelay`. */
export interface Relay {
  /**
   * Starts connecting, listening and publishing in the background. Resolves at once; never rejects.
   * A stopped relay can be started again (on fresh connections).
   */
  start(): Promise<void>
  /** Stops: finishes the batch in flight (bounded by the publish timeout), closes its connections. */
  stop(): Promise<void>
  /** Looks at the outbox now (call after a local commit); also wakes other instances, coalesced. */
  wake(): void
  /** Last known figures. */
  stats(): RelayStats
  /** Reads pending count, oldest pending age and parked count now. */
  refreshStats(): Promise<RelayStats>
  /** Runs one retention pass now. */
  runRetention(): Promise<RetentionResult>
  readonly signals: Signals
  /** Broker connection up. */
  readonly isConnected: boolean
  /** The broker's reason while it blocks the relay's connection (`connection.blocked`), else undefined. */
  readonly blocked: string | undefined
  /** The broker node the relay's connection is on, if connected. */
  readonly node: BrokerNode | undefined
  readonly running: boolean
  /**
   * Publish on commit (`RelayOptions.publishOnCommit`): the sink a `pgDatabase` hands its committed
   * rows to (see `CommitPublisher`); it takes rows only while the relay runs and its link is up.
   */
  readonly committed: CommittedRowSink
}

export type { RelayOptions } from './relay-options.js'

/**
 * Creates the relay: claims due outbox rows in batches, publishes them on a confirm channel with
 * `mandatory`, marks confirmed rows published and failed rows for retry or parking. Wakes at once
 * on `wake()`, soon after another instance's commit (LISTEN), else every `pollIntervalMs`. Broker
 * or database down: logs, backs off (at most 1 s), resumes by itself; never throws out of its loop.
 * Housekeeping (stats, retention, VACUUM) runs apart from publishing. Example:
 * `const relay = createRelay({ pool, amqpUrl, exchange: 'events', service: 'order' }); await relay.start()`.
 */
export function createRelay(options: RelayOptions): Relay {
  return new OutboxRelay(options)
}

/** Fills in `RelayOptions`' defaults for one batch round. */
const batchSettings = (options: RelayOptions): BatchSettings => ({
  exchange: options.exchange,
  source: options.service,
  batchSize: options.batchSize ?? 100,
  publishTimeoutMs: options.publishTimeoutMs ?? 5_000,
  maxAttempts: options.maxAttempts ?? 10,
  backoffBaseMs: options.backoffBaseMs ?? 1_000,
  backoffMaxMs: options.backoffMaxMs ?? 60_000,
  broker: brokerAddress(options.amqpUrl),
})

/**
 * The relay's lifecycle: stopped -> running (its AMQP connection, LISTEN client, publish loop and
 * housekeeping, made anew by every start) -> stopping -> stopped. Reports each batch's outcome.
 */
class OutboxRelay implements Relay {
  readonly signals: Signals
  readonly #options: RelayOptions
  readonly #settings: BatchSettings
  readonly #current: RelayStats = idleRelayStats()
  readonly #housekeeping: Housekeeping
  readonly #waker = new Waker()
  #connection: AmqpConnection | undefined
  #wakeup: CrossInstanceWakeup | undefined
  #publisher: CommitPublisher | undefined
  #running = false
  #loopDone: Promise<void> = Promise.resolve()
  #stopping: Promise<void> | undefined

  constructor(options: RelayOptions) {
    this.#options = options
    this.signals = options.signals ?? createSignals()
    this.#settings = batchSettings(options)
    this.#housekeeping = createHousekeeping({
      pool: options.pool,
      logger: options.logger,
      stats: this.#current,
      statsIntervalMs: options.statsIntervalMs ?? 1_000,
      retentionIntervalMs: options.retentionIntervalMs ?? 10_000,
      retention: {
        retentionMs: options.retentionMs ?? 3_600_000,
        inboxRetentionMs: options.inboxRetentionMs,
      },
      vacuumAfterRows: options.vacuumAfterRows ?? 10_000,
    })
  }

  get isConnected(): boolean {
    return this.#connection?.isConnected ?? false
  }

  get blocked(): string | undefined {
    return this.#connection?.blocked
  }

  get node(): BrokerNode | undefined {
    return this.#connection?.node
  }

  get running(): boolean {
    return this.#running
  }

  async start(): Promise<void> {
    // A start during a stop waits for it, so the old loop and connections are gone first.
    await this.#stopping
    if (!this.#running) this.#start()
  }

  /**
   * Without a listener, the pool's 'error' for an idle client that lost its connection would crash
   * the process; when the pool's owner listens too, it logs the loss and this one stays quiet.
   */
  #poolError = (error: Error): void => {
    const level = this.#options.pool.listenerCount('error') > 1 ? 'debug' : 'warn'
    const code = (error as { code?: unknown }).code
    this.#options.logger?.[level]({ reason: error.message, code }, 'idle database connection lost')
  }

  #start(): void {
    const options = this.#options
    this.#running = true
    options.pool.on('error', this.#poolError)
    const link = createAmqpConnection({
      url: options.amqpUrl,
      name: `${options.service}-relay`,
      logger: options.logger,
      heartbeatS: options.amqp?.heartbeatS,
      connectTimeoutMs: options.amqp?.connectTimeoutMs,
    })
    this.#connection = link
    if (options.publishOnCommit ?? true)
      this.#publisher = new CommitPublisher({
        pool: options.pool,
        connection: link,
        settings: this.#settings,
        holdMs: Math.ceil(this.#settings.publishTimeoutMs) + COMMIT_HOLD_MARGIN_MS,
        logger: options.logger,
        report: (result) => this.#report(result),
        wakeRelay: () => this.wake(),
      })
    const wakeup = createCrossInstanceWakeup({
      pool: options.pool,
      channel: options.wakeup?.channel,
      windowMs: options.wakeup?.windowMs,
      logger: options.logger,
    })
    this.#wakeup = wakeup
    link.start()
    if (options.wakeup?.listen ?? true) wakeup.listen(() => this.#waker.wake())
    this.#loopDone = runPublishLoop({
      pool: options.pool,
      connection: link,
      settings: this.#settings,
      waker: this.#waker,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      declareExchange: options.declareExchange ?? true,
      logger: options.logger,
      onBatch: (result) => this.#report(result),
      onIdle: (changed) => {
        if (changed) this.#housekeeping.refreshSoon()
      },
      running: () => this.#running,
    }).catch((error: unknown) =>
      options.logger?.error({ err: error }, 'outbox relay loop ended unexpectedly'),
    )
    this.#housekeeping.start()
  }

  /** Signals, counters and log lines of one settled batch. */
  #report(result: BatchResult): void {
    const log = this.#options.logger
    for (const row of result.published)
      this.signals.emit('published', {
        id: row.id,
        type: row.type,
        routingKey: row.routing_key,
        lagMs: row.age_ms === undefined ? undefined : row.age_ms + result.confirmMs,
        confirmMs: result.confirmMs,
      })
    this.#current.publishedTotal += result.published.length
    this.#housekeeping.noteChanged(result.published.length + result.failed.length)
    for (const failure of result.failed) {
      this.#current.failedTotal += 1
      const { id, type, attempts, error } = failure
      this.signals.emit('publishFailed', { id, type, attempts, error })
      if (!failure.parked) continue
      if (failure.kind === 'refused') this.#current.refusedTotal += 1
      this.#current.parkedTotal += 1
      this.#current.parked += 1
      log?.error({ messageId: id, type, attempts, error }, 'outbox row parked')
      this.signals.emit('parked', { id, type, attempts, error })
    }
    // A parked row was logged above, at error; the others go out again.
    const retried = result.failed.filter((failure) => !failure.parked)
    const first = retried[0]
    if (!first) return
    // A batch cut off by a lost link is the outage the connection already logged once.
    const level = retried.every((failure) => failure.kind === 'transport') ? 'debug' : 'warn'
    const published = result.published.length
    log?.[level](
      { failed: retried.length, published, error: first.error, kind: first.kind },
      'outbox publish failed; will retry',
    )
  }

  stop(): Promise<void> {
    if (!this.#running) return this.#stopping ?? Promise.resolve()
    this.#stopping = this.#stop().finally(() => {
      this.#stopping = undefined
    })
    return this.#stopping
  }

  async #stop(): Promise<void> {
    this.#running = false
    // Rows that commit meanwhile still reach the stopping publisher, which gives them back.
    await this.#publisher?.stop()
    this.#publisher = undefined
    this.#waker.wake()
    await this.#loopDone
    await this.#housekeeping.stop()
    await this.#wakeup?.close()
    await this.#connection?.close()
    this.#options.pool.off('error', this.#poolError)
  }

  /** A stable sink over this run's `CommitPublisher`, which each start makes anew with its connection. */
  readonly committed: CommittedRowSink = {
    holdMs: () => this.#publisher?.holdMs(),
    publish: (rows: CommittedRow[]) => {
      if (this.#publisher) this.#publisher.publish(rows)
      else this.wake()
    },
    wake: () => this.wake(),
  }

  wake(): void {
    this.#waker.wake()
    if (this.#options.wakeup?.notify ?? true) this.#wakeup?.notify()
  }

  stats(): RelayStats {
    // A stuck row ages between reads: add the time since the read.
    const current = this.#current
    const sinceRead = current.refreshedAtMono === undefined ? 0 : performance.now() - current.refreshedAtMono
    const oldestPendingAgeMs =
      current.pending > 0 ? Math.round(current.oldestPendingAgeMs + sinceRead) : current.oldestPendingAgeMs
    return { ...current, oldestPendingAgeMs }
  }

  refreshStats(): Promise<RelayStats> {
    return this.#housekeeping.refreshStats()
  }

  runRetention(): Promise<RetentionResult> {
    return this.#housekeeping.runRetention()
  }
}
