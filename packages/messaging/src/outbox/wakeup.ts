import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import type { Logger } from '../types.js'

/**
 * In-process wake-up of the relay loop: `sleep(ms)` ends early on `wake()`. A wake that comes
 * while the loop is busy is remembered, so the next `sleep` returns at once (no lost wake-up
 * between "found nothing" and "went to sleep").
 */
export class Waker {
  private pending = false
  private resolveSleep: (() => void) | undefined

  wake(): void {
    this.pending = true
    this.resolveSleep?.()
  }

  /** Resolves after `ms` ms, or at once on a wake (pending or coming). */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.resolveSleep = undefined
        this.pending = false
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.resolveSleep = done
    })
  }
}

/** Options of `createCrossInstanceWakeup`. */
export interface CrossInstanceWakeupOptions {
  /** Pool on the service database: NOTIFYs go through it, and LISTEN copies its connection settings. */
  pool: pg.Pool
  /** NOTIFY channel. Default `saga_outbox`. NOTIFY is per database, so one name serves every service. */
  channel?: string
  /** At most one NOTIFY per this window per process, ms. Default 25. */
  windowMs?: number
  logger?: Logger
}

/**
 * Cross-instance wake-up without a NOTIFY in every business transaction.
 *
 * Why: a NOTIFY inside a transaction takes a cluster-wide lock at commit, serialising every
 * committing transaction that notifies (design.md measured 16 writers falling from ~4,700 to
 * ~1,200 tx/s). Here the NOTIFY is sent after the business commit, on its own, and coalesced:
 * at most one per `windowMs` per process (the first at once, then one trailing NOTIFY if more
 * commits came within the window), so a burst of commits costs a handful of NOTIFYs. Other
 * relays LISTEN on a dedicated connection; a killed LISTEN connection (`pg_terminate_backend`) is
 * remade with backoff, and a wake is raised on reconnect since NOTIFYs during the gap were lost
 * (polling covers that gap too).
 */
export interface CrossInstanceWakeup {
  /** This process's id, sent as the NOTIFY payload so a listener skips its own process's NOTIFYs. */
  readonly instanceId: string
  /** Asks other instances to look at the outbox soon. Never throws, never waits. */
  notify(): void
  /** Starts listening; `onWake` runs for every NOTIFY from another process and after each reconnect. */
  listen(onWake: () => void): void
  /** Whether the LISTEN connection is up. */
  readonly listening: boolean
  /** Stops listening and notifying; waits for an in-flight NOTIFY. */
  close(): Promise<void>
}

/** Creates the cross-instance wake-up (see `CrossInstanceWakeup`). */
export function createCrossInstanceWakeup(options: CrossInstanceWakeupOptions): CrossInstanceWakeup {
  const channel = options.channel ?? 'saga_outbox'
  const windowMs = options.windowMs ?? 25
  const log = options.logger
  const instanceId = randomUUID()
  let closed = false
  let windowTimer: NodeJS.Timeout | undefined
  let dirty = false
  let inFlight: Promise<void> = Promise.resolve()
  let listener: pg.Client | undefined
  let listening = false
  let reconnectTimer: NodeJS.Timeout | undefined
  let failures = 0

  const send = (): void => {
    inFlight = options.pool
      .query('SELECT pg_notify($1, $2)', [channel, instanceId])
      .then(() => undefined)
      .catch((error: unknown) =>
        log?.debug({ err: error }, 'outbox wake-up NOTIFY failed (polling covers it)'),
      )
  }

  const openWindow = (): void => {
    windowTimer = setTimeout(() => {
      windowTimer = undefined
      if (dirty && !closed) {
        dirty = false
        send()
        openWindow()
      }
    }, windowMs)
  }

  const connect = async (onWake: () => void): Promise<void> => {
    const client = new pg.Client(options.pool.options)
    const lost = (error?: Error): void => {
      if (listener !== client) return
      listener = undefined
      listening = false
      client.removeAllListeners('notification')
      client.end().catch(() => undefined)
      if (closed) return
      log?.warn({ err: error }, 'outbox LISTEN connection lost; reconnecting')
      schedule(onWake)
    }
    client.on('error', lost)
    client.on('end', () => lost(new Error('connection ended')))
    client.on('notification', (message) => {
      if (message.channel === channel && message.payload !== instanceId) onWake()
    })
    listener = client
    try {
      await client.connect()
      await client.query(`LISTEN "${channel}"`)
    } catch (error) {
      lost(error as Error)
      return
    }
    if (closed) {
      await client.end().catch(() => undefined)
      return
    }
    listening = true
    failures = 0
    // NOTIFYs sent while we were not listening are gone: look at the outbox now.
    onWake()
  }

  const schedule = (onWake: () => void): void => {
    if (closed || reconnectTimer) return
    const delay = backoffDelay(failures, 100, 1_000)
    failures += 1
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined
      void connect(onWake)
    }, delay)
  }

  return {
    instanceId,
    get listening() {
      return listening
    },
    notify() {
      if (closed) return
      if (windowTimer) {
        dirty = true
        return
      }
      send()
      openWindow()
    },
    listen(onWake) {
      if (closed || listener) return
      void connect(onWake)
    },
    async close() {
      closed = true
      if (windowTimer) clearTimeout(windowTimer)
      if (reconnectTimer) clearTimeout(reconnectTimer)
      const client = listener
      listener = undefined
      listening = false
      await inFlight
      await client?.end().catch(() => undefined)
    },
  }
}
