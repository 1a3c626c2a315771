import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { backoffDelay } from '../amqp/backoff.js'
import { reportBackgroundFailure } from '../database-errors.js'
import { listen, NOTIFY } from '../sql.js'
import type { Logger } from '../types.js'

/**
 * In-process wake-up of the relay loop: `sleep(ms)` ends early on `wake()`; a wake while the loop is
 * busy makes the next `sleep` return at once (no wake-up lost before sleeping).
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
  /** NOTIFY channel. Default `outbox`. NOTIFY is per database, so one name serves every service. */
  channel?: string
  /** At most one NOTIFY per this window per process, ms. Default 25. */
  windowMs?: number
  logger?: Logger
}

/**
 * Cross-instance wake-up without a NOTIFY in every business transaction, which takes a cluster-wide
 * lock at commit (16 writers fell from ~4,700 to ~1,200 tx/s): at most one NOTIFY per `windowMs` per
 * process, after the commit (the first at once, one trailing for the rest of the window). Other
 * relays LISTEN on a connection of their own, remade with backoff, with a wake on reconnect.
 */
export interface CrossInstanceWakeup {
  /** Asks other instances to look at the outbox soon. Never throws, never waits. */
  notify(): void
  /** Starts listening; `onWake` runs for every NOTIFY from another process and after each reconnect. */
  listen(onWake: () => void): void
  /** Stops listening and notifying; waits for an in-flight NOTIFY. */
  close(): Promise<void>
}

/** Creates the cross-instance wake-up (see `CrossInstanceWakeup`). */
export function createCrossInstanceWakeup(options: CrossInstanceWakeupOptions): CrossInstanceWakeup {
  return new NotifyWakeup(options)
}

/** The NOTIFY side (`notify`, `#openWindow`) and the LISTEN side (`listen`, `#connect`, `#lost`). */
class NotifyWakeup implements CrossInstanceWakeup {
  /** This process's id, sent as the NOTIFY payload so a listener skips its own process's NOTIFYs. */
  readonly #instanceId = randomUUID()
  readonly #pool: pg.Pool
  readonly #channel: string
  readonly #windowMs: number
  readonly #log: Logger | undefined
  #closed = false
  #windowTimer: NodeJS.Timeout | undefined
  #dirty = false
  #inFlight: Promise<void> = Promise.resolve()
  #listener: pg.Client | undefined
  #reconnectTimer: NodeJS.Timeout | undefined
  #failures = 0

  constructor(options: CrossInstanceWakeupOptions) {
    this.#pool = options.pool
    this.#channel = options.channel ?? 'outbox'
    this.#windowMs = options.windowMs ?? 25
    this.#log = options.logger
  }

  notify(): void {
    if (this.#closed) return
    if (this.#windowTimer) {
      this.#dirty = true
      return
    }
    this.#send()
    this.#openWindow()
  }

  #send(): void {
    this.#inFlight = this.#pool
      .query(NOTIFY, [this.#channel, this.#instanceId])
      .then(() => undefined)
      // Polling covers a lost NOTIFY.
      .catch((error: unknown) => reportBackgroundFailure(this.#log, error, 'outbox wake-up NOTIFY'))
  }

  /** The window after a NOTIFY: commits within it are announced by one NOTIFY at its end. */
  #openWindow(): void {
    this.#windowTimer = setTimeout(() => {
      this.#windowTimer = undefined
      if (this.#dirty && !this.#closed) {
        this.#dirty = false
        this.#send()
        this.#openWindow()
      }
    }, this.#windowMs)
  }

  listen(onWake: () => void): void {
    if (this.#closed || this.#listener) return
    void this.#connect(onWake)
  }

  async #connect(onWake: () => void): Promise<void> {
    const client = new pg.Client(this.#pool.options)
    client.on('error', (error: Error) => this.#lost(client, onWake, error))
    client.on('end', () => this.#lost(client, onWake, new Error('connection ended')))
    client.on('notification', (message) => {
      if (message.channel === this.#channel && message.payload !== this.#instanceId) onWake()
    })
    this.#listener = client
    try {
      await client.connect()
      await client.query(listen(this.#channel))
    } catch (error) {
      this.#lost(client, onWake, error as Error)
      return
    }
    if (this.#closed) {
      await client.end().catch(() => undefined)
      return
    }
    this.#failures = 0
    // NOTIFYs sent while we were not listening are gone: look at the outbox now.
    onWake()
  }

  #lost(client: pg.Client, onWake: () => void, error: Error): void {
    if (this.#listener !== client) return
    this.#listener = undefined
    client.removeAllListeners('notification')
    client.end().catch(() => undefined)
    if (this.#closed) return
    if (this.#failures === 0) {
      const code = (error as { code?: unknown }).code
      this.#log?.warn({ reason: error.message, code }, 'outbox LISTEN connection lost; reconnecting')
    }
    if (this.#reconnectTimer) return
    const delay = backoffDelay(this.#failures, 100, 1_000)
    this.#failures += 1
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined
      void this.#connect(onWake)
    }, delay)
  }

  async close(): Promise<void> {
    this.#closed = true
    if (this.#windowTimer) clearTimeout(this.#windowTimer)
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer)
    const client = this.#listener
    this.#listener = undefined
    await this.#inFlight
    await client?.end().catch(() => undefined)
  }
}
