import { createAmqpConnection, type AmqpConnection } from '../amqp/connection.js'
import { createSignals, type Signals } from '../signals.js'
import type { BatchResult, BatchSettings } from './batch.js'
import { createHousekeeping } from './housekeeping.js'
import { runPublishLoop } from './publish-loop.js'
import type { RelayOptions } from './relay-options.js'
import type { RetentionResult } from './retention.js'
import type { RelayStats } from './stats.js'
import { createCrossInstanceWakeup, Waker, type CrossInstanceWakeup } from './wakeup.js'

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
  readonly running: boolean
}

export type { RelayOptions } from './relay-options.js'

/**
 * Creates the relay: claims due outbox rows in batches, publishes them on a confirm channel with
 * `mandatory`, marks confirmed rows published and failed rows for retry or parking. Wakes at once
 * on `wake()`, soon after another instance's commit (LISTEN), else every `pollIntervalMs`. Broker
 * or database down: logs, backs off (at most 1 s), resumes by itself; never throws out of its loop.
 * The publish loop (`runPublishLoop`) and the housekeeping (stats, retention, VACUUM:
 * `createHousekeeping`) run apart, so a slow retention pass never delays a publish.
 * Example: `const relay = createRelay({ pool, amqpUrl, exchange: 'saga.events', service: 'order' }); await relay.start()`.
 */
export function createRelay(options: RelayOptions): Relay {
  const log = options.logger
  const signals = options.signals ?? createSignals()
  const settings: BatchSettings = {
    exchange: options.exchange,
    source: options.service,
    batchSize: options.batchSize ?? 100,
    publishTimeoutMs: options.publishTimeoutMs ?? 5_000,
    maxAttempts: options.maxAttempts ?? 10,
    backoffBaseMs: options.backoffBaseMs ?? 1_000,
    backoffMaxMs: options.backoffMaxMs ?? 60_000,
  }
  const current: RelayStats = {
    pending: 0,
    oldestPendingAgeMs: 0,
    parked: 0,
    publishedTotal: 0,
    failedTotal: 0,
    parkedTotal: 0,
    refreshedAt: 0,
  }
  const housekeeping = createHousekeeping({
    pool: options.pool,
    logger: log,
    stats: current,
    statsIntervalMs: options.statsIntervalMs ?? 1_000,
    retentionIntervalMs: options.retentionIntervalMs ?? 10_000,
    retention: { retentionMs: options.retentionMs ?? 3_600_000, inboxRetentionMs: options.inboxRetentionMs },
    vacuumAfterRows: options.vacuumAfterRows ?? 10_000,
  })
  const waker = new Waker()
  const poolError = (error: Error): void => log?.warn({ err: error }, 'idle database connection failed')
  // Made anew by every start(): a closed connection or LISTEN client stays closed.
  let connection: AmqpConnection | undefined
  let wakeup: CrossInstanceWakeup | undefined
  let running = false
  let loopDone: Promise<void> = Promise.resolve()
  let stopping: Promise<void> | undefined

  const report = (result: BatchResult): void => {
    for (const row of result.published)
      signals.emit('published', {
        id: row.id,
        type: row.type,
        routingKey: row.routing_key,
        lagMs: row.age_ms === undefined ? undefined : row.age_ms + result.sinceClaimMs,
        confirmMs: result.confirmMs,
      })
    current.publishedTotal += result.published.length
    housekeeping.noteChanged(result.published.length + result.failed.length)
    for (const failure of result.failed) {
      current.failedTotal += 1
      const { id, type, attempts, error } = failure
      signals.emit('publishFailed', { id, type, attempts, error })
      if (!failure.parked) continue
      current.parkedTotal += 1
      current.parked += 1
      log?.error({ messageId: id, type, attempts, error }, 'outbox row parked')
      signals.emit('parked', { id, type, attempts, error })
    }
    if (result.failed.length > 0) {
      log?.warn(
        { failed: result.failed.length, published: result.published.length, error: result.failed[0]?.error },
        'outbox publish failed; will retry',
      )
    }
  }

  const start = (): void => {
    running = true
    options.pool.on('error', poolError)
    const link = createAmqpConnection({
      url: options.amqpUrl,
      name: `${options.service}-relay`,
      logger: log,
      heartbeatS: options.amqp?.heartbeatS,
      connectTimeoutMs: options.amqp?.connectTimeoutMs,
    })
    connection = link
    wakeup = createCrossInstanceWakeup({
      pool: options.pool,
      channel: options.wakeup?.channel,
      windowMs: options.wakeup?.windowMs,
      logger: log,
    })
    link.start()
    if (options.wakeup?.listen ?? true) wakeup.listen(() => waker.wake())
    loopDone = runPublishLoop({
      pool: options.pool,
      connection: link,
      settings,
      waker,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      declareExchange: options.declareExchange ?? true,
      logger: log,
      onBatch: report,
      onIdle: (changed) => {
        if (changed) housekeeping.refreshSoon()
      },
      running: () => running,
    }).catch((error: unknown) => log?.error({ err: error }, 'outbox relay loop ended unexpectedly'))
    housekeeping.start()
  }

  const stop = async (): Promise<void> => {
    running = false
    waker.wake()
    await loopDone
    await housekeeping.stop()
    await wakeup?.close()
    await connection?.close()
    options.pool.off('error', poolError)
  }

  return {
    signals,
    get isConnected() {
      return connection?.isConnected ?? false
    },
    get blocked() {
      return connection?.blocked
    },
    get running() {
      return running
    },
    async start() {
      // A start during a stop waits for it, so the old loop and connections are gone first.
      await stopping
      if (!running) start()
    },
    stop() {
      if (!running) return stopping ?? Promise.resolve()
      stopping = stop().finally(() => {
        stopping = undefined
      })
      return stopping
    },
    wake() {
      waker.wake()
      if (options.wakeup?.notify ?? true) wakeup?.notify()
    },
    stats: () => {
      // The oldest pending row, if still pending, has aged since the read: add the time elapsed,
      // so a stuck row's age never looks younger than it is between reads.
      const sinceRead =
        current.refreshedAtMono === undefined ? 0 : performance.now() - current.refreshedAtMono
      const oldestPendingAgeMs =
        current.pending > 0 ? Math.round(current.oldestPendingAgeMs + sinceRead) : current.oldestPendingAgeMs
      return { ...current, oldestPendingAgeMs }
    },
    refreshStats: () => housekeeping.refreshStats(),
    runRetention: () => housekeeping.runRetention(),
  }
}
