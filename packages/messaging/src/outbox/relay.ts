import type { ConfirmChannel } from 'amqplib'
import { backoffDelay } from '../amqp/backoff.js'
import { createAmqpConnection, type AmqpConnection } from '../amqp/connection.js'
import { withTimeout } from '../amqp/timeout.js'
import { createSignals, type Signals } from '../signals.js'
import { runBatch, type BatchResult, type BatchSettings } from './batch.js'
import type { RelayOptions } from './relay-options.js'
import { deleteExpired, vacuumOutbox, type RetentionResult } from './retention.js'
import { readParked, readPending, type RelayStats } from './stats.js'
import { createCrossInstanceWakeup, Waker, type CrossInstanceWakeup } from './wakeup.js'

/** The outbox relay; see `createRelay`. */
export interface Relay {
  /** Starts connecting, listening and publishing in the background. Resolves at once; never rejects. */
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
  readonly running: boolean
}

export type { RelayOptions } from './relay-options.js'

const PARKED_EVERY = 12

/**
 * Creates the relay: claims due outbox rows in batches, publishes them on a confirm channel with
 * `mandatory`, marks confirmed rows published and failed rows for retry or parking. Wakes at once
 * on `wake()`, soon after another instance's commit (LISTEN), else every `pollIntervalMs`. Broker
 * or database down: logs, backs off (at most 1 s), resumes by itself; never throws out of its loop.
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
  const pollIntervalMs = options.pollIntervalMs ?? 1_000
  const statsIntervalMs = options.statsIntervalMs ?? 5_000
  const retentionIntervalMs = options.retentionIntervalMs ?? 10_000
  const retention = {
    retentionMs: options.retentionMs ?? 3_600_000,
    inboxRetentionMs: options.inboxRetentionMs,
  }
  let declareExchange = options.declareExchange ?? true
  const vacuumAfterRows = options.vacuumAfterRows ?? 10_000
  let changedSinceVacuum = 0
  const connection: AmqpConnection = createAmqpConnection({
    url: options.amqpUrl,
    name: `${options.service}-relay`,
    logger: log,
    heartbeatS: options.amqp?.heartbeatS,
    connectTimeoutMs: options.amqp?.connectTimeoutMs,
  })
  const waker = new Waker()
  const wakeup: CrossInstanceWakeup = createCrossInstanceWakeup({
    pool: options.pool,
    channel: options.wakeup?.channel,
    windowMs: options.wakeup?.windowMs,
    logger: log,
  })
  const current: RelayStats = {
    pending: 0,
    oldestPendingAgeMs: 0,
    parked: 0,
    publishedTotal: 0,
    failedTotal: 0,
    parkedTotal: 0,
    refreshedAt: 0,
  }
  const poolError = (error: Error): void => log?.warn({ err: error }, 'idle database connection failed')
  let channel: ConfirmChannel | undefined
  let running = false
  let loopDone: Promise<void> = Promise.resolve()
  let statsTimer: NodeJS.Timeout | undefined
  let retentionTimer: NodeJS.Timeout | undefined
  let statsRound = 0
  const background = new Set<Promise<unknown>>()

  const track = <T>(promise: Promise<T>): Promise<T> => {
    background.add(promise)
    void promise.finally(() => background.delete(promise)).catch(() => undefined)
    return promise
  }

  const discardChannel = (): void => {
    const old = channel
    channel = undefined
    // Not awaited: on a silent broker close() would wait for a close-ok that never comes.
    old?.close().catch(() => undefined)
  }

  const openChannel = async (): Promise<ConfirmChannel> => {
    if (channel) return channel
    const opened = await connection.openChannel(true, settings.publishTimeoutMs)
    opened.on('close', () => {
      if (channel === opened) channel = undefined
    })
    if (declareExchange) {
      try {
        await withTimeout(
          opened.assertExchange(settings.exchange, 'topic', { durable: true }),
          settings.publishTimeoutMs,
          'assert exchange',
        )
      } catch (error) {
        opened.close().catch(() => undefined)
        // 406: the exchange exists with other arguments; it is someone else's to declare then.
        if ((error as { code?: number }).code === 406) declareExchange = false
        throw error
      }
    }
    channel = opened
    return opened
  }

  const report = (result: BatchResult): void => {
    for (const row of result.published)
      signals.emit('published', { id: row.id, type: row.type, routingKey: row.routing_key })
    current.publishedTotal += result.published.length
    changedSinceVacuum += result.published.length + result.failed.length
    for (const failure of result.failed) {
      current.failedTotal += 1
      signals.emit('publishFailed', {
        id: failure.id,
        type: failure.type,
        attempts: failure.attempts,
        error: failure.error,
      })
      if (!failure.parked) continue
      current.parkedTotal += 1
      current.parked += 1
      log?.error(
        { messageId: failure.id, type: failure.type, attempts: failure.attempts, error: failure.error },
        'outbox row parked',
      )
      signals.emit('parked', {
        id: failure.id,
        type: failure.type,
        attempts: failure.attempts,
        error: failure.error,
      })
    }
    if (result.failed.length > 0) {
      log?.warn(
        { failed: result.failed.length, published: result.published.length, error: result.failed[0]?.error },
        'outbox publish failed; will retry',
      )
    }
  }

  const loop = async (): Promise<void> => {
    let transportFailures = 0
    let databaseFailures = 0
    while (running) {
      if (!connection.isConnected) {
        await connection.waitForConnection(pollIntervalMs).catch(() => undefined)
        continue
      }
      let open: ConfirmChannel
      try {
        open = await openChannel()
      } catch (error) {
        log?.warn({ err: error }, 'outbox relay cannot open a channel; retrying')
        await waker.sleep(backoffDelay(transportFailures++, 100, 1_000))
        continue
      }
      let result: BatchResult
      try {
        result = await runBatch(options.pool, open, settings)
        databaseFailures = 0
      } catch (error) {
        const level = databaseFailures % 30 === 0 ? 'warn' : 'debug'
        log?.[level]({ err: error }, 'outbox relay database round failed; retrying')
        await waker.sleep(backoffDelay(databaseFailures++, 100, 1_000))
        continue
      }
      if (result.channelBroken) discardChannel()
      report(result)
      if (result.failed.some((failure) => failure.kind === 'transport')) {
        await waker.sleep(backoffDelay(transportFailures++, 100, 1_000))
        continue
      }
      transportFailures = 0
      // A full batch means more may be due: drain before sleeping.
      if (result.claimed === settings.batchSize) continue
      await waker.sleep(pollIntervalMs)
    }
  }

  const refreshStats = async (): Promise<RelayStats> => {
    const pending = await readPending(options.pool)
    Object.assign(current, pending, { refreshedAt: Date.now() })
    if (statsRound++ % PARKED_EVERY === 0) current.parked = await readParked(options.pool)
    return { ...current }
  }

  const runRetention = async (): Promise<RetentionResult> => {
    const result = await deleteExpired(options.pool, retention)
    changedSinceVacuum += result.outbox
    if (vacuumAfterRows > 0 && changedSinceVacuum >= vacuumAfterRows) {
      changedSinceVacuum = 0
      await vacuumOutbox(options.pool)
    }
    return result
  }

  return {
    signals,
    get isConnected() {
      return connection.isConnected
    },
    get running() {
      return running
    },
    start() {
      if (running) return Promise.resolve()
      running = true
      options.pool.on('error', poolError)
      connection.onLost(() => {
        channel = undefined
      })
      connection.start()
      if (options.wakeup?.listen ?? true) wakeup.listen(() => waker.wake())
      loopDone = loop().catch((error: unknown) =>
        log?.error({ err: error }, 'outbox relay loop ended unexpectedly'),
      )
      statsTimer = setInterval(() => {
        track(refreshStats()).catch((error: unknown) =>
          log?.debug({ err: error }, 'outbox stats read failed'),
        )
      }, statsIntervalMs)
      if (retentionIntervalMs > 0) {
        retentionTimer = setInterval(() => {
          if (background.size > 2) return
          track(runRetention()).catch((error: unknown) =>
            log?.debug({ err: error }, 'outbox retention failed'),
          )
        }, retentionIntervalMs)
      }
      track(refreshStats()).catch(() => undefined)
      return Promise.resolve()
    },
    async stop() {
      if (!running) return
      running = false
      clearInterval(statsTimer)
      clearInterval(retentionTimer)
      waker.wake()
      await loopDone
      await Promise.allSettled([...background])
      await wakeup.close()
      discardChannel()
      await connection.close()
      options.pool.off('error', poolError)
    },
    wake() {
      waker.wake()
      if (options.wakeup?.notify ?? true) wakeup.notify()
    },
    stats: () => ({ ...current }),
    refreshStats,
    runRetention,
  }
}
