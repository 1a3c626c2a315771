import amqp from 'amqplib'
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib'
import type { Logger } from '../types.js'
import { backoffDelay } from './backoff.js'
import { withTimeout } from './timeout.js'

/** Options of `createAmqpConnection`. */
export interface AmqpConnectionOptions {
  /** `amqp://user:pass@host:5672/vhost`; a `heartbeat` query parameter in it wins over `heartbeatS`. */
  url: string
  /** Shown in the broker's connection list and in logs, e.g. `inventory-relay`. */
  name?: string
  logger?: Logger
  /** Longest a connect (TCP + AMQP handshake) may take, ms. Default 5,000. A silent peer cannot hang it. */
  connectTimeoutMs?: number
  /**
   * AMQP heartbeat, s. Default 10: a dead peer is noticed after about two missed beats (~20 s); a
   * publish notices sooner through its confirm timeout. 5 s dropped live connections when the CPU
   * was starved (e2e on 2 busy cores).
   */
  heartbeatS?: number
  /** First reconnect delay, ms. Default 100. */
  reconnectBaseMs?: number
  /**
   * Longest reconnect delay, ms. Default 1,000, so a broker that comes back is in use again within
   * about a second (design.md: "resumes within about a second of the dependency coming back").
   */
  reconnectMaxMs?: number
}

/** Called with the fresh connection after each (re)connect; owners recreate their channels here. */
export type ConnectedHook = (connection: ChannelModel) => void | Promise<void>
/** Called once per lost connection with the reason. */
export type LostHook = (error: Error) => void

/**
 * A connection to RabbitMQ that reconnects by itself, forever, with capped exponential backoff.
 * It never emits an unhandled 'error': the connection and every channel made through it carry
 * handlers. amqplib's own recovery does not recreate channels (design.md), hence the hooks.
 */
export interface AmqpConnection {
  /** Starts connecting in the background; never throws because the broker is down. */
  start(): void
  /** True while a connection is open. */
  readonly isConnected: boolean
  /** The open connection, if any. */
  readonly current: ChannelModel | undefined
  /**
   * The broker's reason while it blocks this connection's publishes (AMQP `connection.blocked`,
   * e.g. `low on memory` during a memory alarm:
   * https://www.rabbitmq.com/docs/connection-blocked), else undefined. Cleared by
   * `connection.unblocked` and by a reconnect.
   */
  readonly blocked: string | undefined
  /** Resolves once the connection is not blocked (unblocked, lost or closed), or after `timeoutMs`. */
  waitUntilUnblocked(timeoutMs: number): Promise<void>
  /** Registers a hook run after every (re)connect (and at once if connected); returns an unsubscribe. */
  onConnected(hook: ConnectedHook): () => void
  /** Registers a hook run when the connection is lost; returns an unsubscribe. */
  onLost(hook: LostHook): () => void
  /** Resolves with an open connection; rejects after `timeoutMs` ms or when closed. */
  waitForConnection(timeoutMs: number): Promise<ChannelModel>
  /**
   * Opens a channel (`confirm: true` for publisher confirms) on the current connection, with an
   * 'error' handler attached, within `timeoutMs` ms (a silent broker cannot hang it: the
   * connection is then dropped and remade). Rejects when not connected.
   */
  openChannel(confirm: true, timeoutMs?: number): Promise<ConfirmChannel>
  openChannel(confirm: false, timeoutMs?: number): Promise<Channel>
  /** Drops the current connection at once (no handshake) and reconnects; for a broker gone silent. */
  drop(reason: string): void
  /** Closes for good: stops reconnecting, closes the connection (bounded by the connect timeout). */
  close(): Promise<void>
}

interface RawConnection {
  stream?: { destroy(error?: Error): void }
}

function withHeartbeat(url: string, heartbeatS: number): string {
  const parsed = new URL(url)
  if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(heartbeatS))
  return parsed.toString()
}

function redact(url: string): string {
  const parsed = new URL(url)
  if (parsed.password) parsed.password = '***'
  return parsed.toString()
}

/**
 * Creates a resilient AMQP connection (amqplib 2.x promise API). Call `start()`, then use
 * `onConnected` to (re)create channels. Example:
 * `const conn = createAmqpConnection({ url, name: 'relay' }); conn.onConnected(openChannels); conn.start()`.
 */
export function createAmqpConnection(options: AmqpConnectionOptions): AmqpConnection {
  const url = withHeartbeat(options.url, options.heartbeatS ?? 10)
  const name = options.name ?? 'saga-messaging'
  const log = options.logger
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000
  const baseMs = options.reconnectBaseMs ?? 100
  const maxMs = options.reconnectMaxMs ?? 1_000
  const connectedHooks = new Set<ConnectedHook>()
  const lostHooks = new Set<LostHook>()
  const waiters = new Set<{ resolve: (c: ChannelModel) => void; reject: (e: Error) => void }>()
  let current: ChannelModel | undefined
  let blocked: string | undefined
  const unblockWaiters = new Set<() => void>()
  const setBlocked = (reason: string | undefined): void => {
    blocked = reason
    if (reason !== undefined) return
    for (const waiter of unblockWaiters) waiter()
    unblockWaiters.clear()
  }
  let started = false
  let closed = false
  let attempt = 0
  let timer: NodeJS.Timeout | undefined

  const schedule = (): void => {
    if (closed || timer) return
    const delay = backoffDelay(attempt, baseMs, maxMs)
    attempt += 1
    timer = setTimeout(() => {
      timer = undefined
      void connectOnce()
    }, delay)
  }

  const runConnectedHook = async (hook: ConnectedHook, connection: ChannelModel): Promise<void> => {
    try {
      await hook(connection)
    } catch (error) {
      log?.warn({ err: error, connection: name }, 'amqp connected hook failed')
    }
  }

  const lose = (connection: ChannelModel, error: Error): void => {
    if (current !== connection) return
    current = undefined
    setBlocked(undefined)
    log?.warn({ err: error, connection: name }, 'amqp connection lost')
    for (const hook of lostHooks) {
      try {
        hook(error)
      } catch (hookError) {
        log?.warn({ err: hookError, connection: name }, 'amqp lost hook failed')
      }
    }
    attempt = 0
    schedule()
  }

  const connectOnce = async (): Promise<void> => {
    let connection: ChannelModel
    try {
      const connecting = amqp.connect(url, {
        timeout: connectTimeoutMs,
        // Small frames (a confirm, a channel open) must not wait for Nagle's algorithm and the
        // peer's delayed ACK (up to 40 ms on Linux): the relay waits on every confirm round trip.
        noDelay: true,
        clientProperties: { connection_name: name },
      })
      connection = await withTimeout(connecting, connectTimeoutMs + 500, 'amqp connect').catch(
        (error: unknown) => {
          // A connect that succeeds after we gave up must not leak an open connection.
          connecting.then((late) => late.close().catch(() => undefined)).catch(() => undefined)
          throw error
        },
      )
    } catch (error) {
      // Warn on the first failure and then now and again: a broker down for an hour must not flood the log.
      const level = attempt % 30 === 0 ? 'warn' : 'debug'
      log?.[level](
        { err: error, connection: name, url: redact(url), attempt },
        'amqp connect failed; retrying',
      )
      schedule()
      return
    }
    if (closed) {
      await connection.close().catch(() => undefined)
      return
    }
    connection.on('error', (error: Error) =>
      log?.warn({ err: error, connection: name }, 'amqp connection error'),
    )
    connection.on('handler-error', (error: Error, event: string) =>
      log?.error({ err: error, event, connection: name }, 'amqp event handler threw'),
    )
    connection.on('close', (error?: Error) => lose(connection, error ?? new Error('connection closed')))
    connection.on('blocked', (reason: string) => {
      if (current !== connection) return
      log?.warn({ reason, connection: name }, 'amqp connection blocked')
      setBlocked(String(reason || 'blocked by the broker'))
    })
    connection.on('unblocked', () => {
      if (current !== connection) return
      log?.info({ connection: name }, 'amqp connection unblocked')
      setBlocked(undefined)
    })
    current = connection
    attempt = 0
    log?.info({ connection: name, url: redact(url) }, 'amqp connected')
    for (const waiter of waiters) waiter.resolve(connection)
    waiters.clear()
    for (const hook of connectedHooks) await runConnectedHook(hook, connection)
  }

  const api: AmqpConnection = {
    start() {
      if (started || closed) return
      started = true
      void connectOnce()
    },
    get isConnected() {
      return current !== undefined
    },
    get current() {
      return current
    },
    get blocked() {
      return blocked
    },
    waitUntilUnblocked(timeoutMs) {
      if (blocked === undefined) return Promise.resolve()
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer)
          unblockWaiters.delete(done)
          resolve()
        }
        const timer = setTimeout(done, timeoutMs)
        unblockWaiters.add(done)
      })
    },
    onConnected(hook) {
      connectedHooks.add(hook)
      if (current) void runConnectedHook(hook, current)
      return () => connectedHooks.delete(hook)
    },
    onLost(hook) {
      lostHooks.add(hook)
      return () => lostHooks.delete(hook)
    },
    waitForConnection(timeoutMs) {
      if (current) return Promise.resolve(current)
      if (closed) return Promise.reject(new Error('amqp connection closed'))
      let waiter: { resolve: (c: ChannelModel) => void; reject: (e: Error) => void } | undefined
      const waiting = new Promise<ChannelModel>((resolve, reject) => {
        waiter = { resolve, reject }
        waiters.add(waiter)
      })
      return withTimeout(waiting, timeoutMs, `amqp connection (${name})`).finally(() => {
        if (waiter) waiters.delete(waiter)
      })
    },
    async openChannel(confirm: boolean, timeoutMs = connectTimeoutMs): Promise<never> {
      const connection = current
      if (!connection) throw new Error(`amqp connection (${name}) is not open`)
      const opening = confirm ? connection.createConfirmChannel() : connection.createChannel()
      let channel: Channel
      try {
        channel = await withTimeout(opening, timeoutMs, 'amqp channel open')
      } catch (error) {
        opening.then((late) => late.close().catch(() => undefined)).catch(() => undefined)
        // A channel that cannot open in time means the broker went silent: remake the connection.
        if (current === connection) api.drop('channel open timed out')
        throw error
      }
      channel.on('error', (error: Error) =>
        log?.debug({ err: error, connection: name }, 'amqp channel error'),
      )
      channel.on('handler-error', (error: Error, event: string) =>
        log?.error({ err: error, event, connection: name }, 'amqp channel event handler threw'),
      )
      return channel as never
    },
    drop(reason) {
      const connection = current
      if (!connection) return
      const error = new Error(`amqp connection dropped: ${reason}`)
      const raw = (connection as unknown as { connection?: RawConnection }).connection
      lose(connection, error)
      raw?.stream?.destroy(error)
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = undefined
      for (const waiter of waiters) waiter.reject(new Error('amqp connection closed'))
      waiters.clear()
      const connection = current
      current = undefined
      setBlocked(undefined)
      if (!connection) return
      try {
        await withTimeout(connection.close(), connectTimeoutMs, 'amqp close')
      } catch {
        const raw = (connection as unknown as { connection?: RawConnection }).connection
        raw?.stream?.destroy()
      }
    },
  }
  return api
}
