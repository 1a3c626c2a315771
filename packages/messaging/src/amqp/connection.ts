import { hostname } from 'node:os'
import amqp from 'amqplib'
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib'
import { errorMessage } from '../errors.js'
import type { Logger } from '../types.js'
import { backoffDelay } from './backoff.js'
import {
  brokerAddresses,
  brokerNode,
  firstAddress,
  retryDelay,
  type BrokerAddress,
  type BrokerNode,
} from './broker-addresses.js'
import { withTimeout } from './timeout.js'

/** Options of `createAmqpConnection`. */
export interface AmqpConnectionOptions {
  /**
   * `amqp://user:pass@host:5672/vhost`, or a cluster's nodes separated by commas (`splitBrokerUrls`),
   * tried in turn from `firstAddress`, backing off once a whole round failed. A URL's `heartbeat`
   * wins over `heartbeatS`. `createAmqpConnection` throws an Error naming an entry that is no URL.
   */
  url: string
  /** Shown in the broker's connection list and in logs, e.g. `inventory-relay`. Default `messaging`. */
  name?: string
  logger?: Logger
  /** Longest a connect (TCP + AMQP handshake) may take, ms. Default 5,000. A silent peer cannot hang it. */
  connectTimeoutMs?: number
  /** AMQP heartbeat, s. Default 10 (a dead peer noticed in ~20 s); 5 dropped live connections on a starved CPU. */
  heartbeatS?: number
  /** First reconnect delay, ms. Default 100. */
  reconnectBaseMs?: number
  /** Longest reconnect delay, ms. Default 1,000: a broker that is back is in use within about a second. */
  reconnectMaxMs?: number
}

/** Run with the fresh connection after each (re)connect; owners recreate their channels here. */
type ConnectedHook = (connection: ChannelModel) => void | Promise<void>

/**
 * Where an `AmqpConnection` is in its life: `idle` before `start`; `connecting` (TCP and AMQP
 * handshake); `waiting` for the backoff timer; `connected`; `blocked` while the broker holds its
 * publishes (`connection.blocked`, e.g. a memory alarm); `closed` for good.
 */
export type ConnectionState =
  | { readonly name: 'idle' }
  | { readonly name: 'connecting'; readonly attempt: number }
  | { readonly name: 'waiting'; readonly attempt: number; readonly timer: NodeJS.Timeout }
  | { readonly name: 'connected'; readonly connection: ChannelModel }
  | { readonly name: 'blocked'; readonly connection: ChannelModel; readonly reason: string }
  | { readonly name: 'closed' }

/**
 * A connection to RabbitMQ that reconnects by itself, forever, with capped exponential backoff.
 * It never emits an unhandled 'error': the connection and every channel made through it carry
 * handlers. amqplib's own recovery does not recreate channels, hence the hooks.
 */
export interface AmqpConnection {
  /** Starts connecting in the background; never throws because the broker is down. */
  start(): void
  /** True while a connection is open (`connected` or `blocked`). */
  readonly isConnected: boolean
  /** The open connection, if any. */
  readonly current: ChannelModel | undefined
  /** The broker's reason while it blocks this connection's publishes, else undefined. */
  readonly blocked: string | undefined
  /** The node the open connection is on (address and cluster name), if any. */
  readonly node: BrokerNode | undefined
  /** Resolves once the connection is not blocked (unblocked, lost or closed), or after `timeoutMs`. */
  waitUntilUnblocked(timeoutMs: number): Promise<void>
  /** Registers a hook run after every (re)connect (and at once if connected); returns an unsubscribe. */
  onConnected(hook: ConnectedHook): () => void
  /** Registers a hook run once per lost connection, with the reason; returns an unsubscribe. */
  onLost(hook: (error: Error) => void): () => void
  /** Resolves with an open connection; rejects after `timeoutMs` ms or when closed. */
  waitForConnection(timeoutMs: number): Promise<ChannelModel>
  /**
   * Opens a channel (`confirm: true` for publisher confirms) with an 'error' handler, within
   * `timeoutMs` ms (default the connect timeout; past it the connection is dropped and remade).
   * Rejects when not connected.
   */
  openChannel(confirm: true, timeoutMs?: number): Promise<ConfirmChannel>
  openChannel(confirm: false, timeoutMs?: number): Promise<Channel>
  /** Drops the current connection at once (no handshake) and reconnects; for a broker gone silent. */
  drop(reason: string): void
  /** Closes for good: stops reconnecting, closes the connection (bounded by the connect timeout). */
  close(): Promise<void>
}

interface ConnectionWaiter {
  resolve: (connection: ChannelModel) => void
  reject: (error: Error) => void
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(an invalid URL)'
  }
}

/** Destroys the socket under an amqplib connection: no close handshake with a broker gone silent. */
function destroySocket(connection: ChannelModel, error?: Error): void {
  const raw = (connection as unknown as { connection?: { stream?: { destroy(error?: Error): void } } })
    .connection
  raw?.stream?.destroy(error)
}

/**
 * The state machine behind `createAmqpConnection`: one method per transition (`connect`, `opened`,
 * `retryLater`, `lost`, `block`/`unblock`, `close`), each moving `state` and running the hooks of
 * that transition.
 */
class ResilientConnection implements AmqpConnection {
  #state: ConnectionState = { name: 'idle' }
  readonly #addresses: BrokerAddress[]
  /** The index of the address in use, or to try next. */
  #at: number
  readonly #name: string
  readonly #log: Logger | undefined
  readonly #connectTimeoutMs: number
  readonly #baseMs: number
  readonly #maxMs: number
  readonly #connectedHooks = new Set<ConnectedHook>()
  readonly #lostHooks = new Set<(error: Error) => void>()
  readonly #waiters = new Set<ConnectionWaiter>()
  readonly #unblockWaiters = new Set<() => void>()
  /** When the connection went away (or the first connect failed), for the "back after" line. */
  #downSince: number | undefined

  constructor(options: AmqpConnectionOptions) {
    this.#addresses = brokerAddresses(options.url, options.heartbeatS ?? 10)
    this.#name = options.name ?? 'messaging'
    this.#at = firstAddress(`${hostname()}/${process.pid}/${this.#name}`, this.#addresses.length)
    this.#log = options.logger
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5_000
    this.#baseMs = options.reconnectBaseMs ?? 100
    this.#maxMs = options.reconnectMaxMs ?? 1_000
  }

  /** Read through a getter: a check after an await must see the state now, not the narrowed one. */
  get #closed(): boolean {
    return this.#state.name === 'closed'
  }

  get current(): ChannelModel | undefined {
    const state = this.#state
    return state.name === 'connected' || state.name === 'blocked' ? state.connection : undefined
  }

  get isConnected(): boolean {
    return this.current !== undefined
  }

  get blocked(): string | undefined {
    return this.#state.name === 'blocked' ? this.#state.reason : undefined
  }

  get node(): BrokerNode | undefined {
    const connection = this.current
    return connection && brokerNode(connection, this.#address)
  }

  get #address(): BrokerAddress {
    return this.#addresses[this.#at] as BrokerAddress
  }

  start(): void {
    if (this.#state.name === 'idle') void this.#connect(0)
  }

  /** `idle`/`waiting` -> `connecting`: one connect, then `opened` or `retryLater`. */
  async #connect(attempt: number): Promise<void> {
    this.#state = { name: 'connecting', attempt }
    let connection: ChannelModel
    try {
      connection = await this.#handshake()
    } catch (error) {
      this.#retryLater(attempt, error)
      return
    }
    if (this.#closed) {
      await connection.close().catch(() => undefined)
      return
    }
    this.#opened(connection)
  }

  /** TCP and AMQP handshake, bounded; a connect that succeeds after the bound is closed, not leaked. */
  async #handshake(): Promise<ChannelModel> {
    const connecting = amqp.connect(this.#address.url, {
      timeout: this.#connectTimeoutMs,
      // Small frames (a confirm, a channel open) must not wait for Nagle's algorithm and the
      // peer's delayed ACK (up to 40 ms on Linux): the relay waits on every confirm round trip.
      noDelay: true,
      clientProperties: { connection_name: this.#name },
    })
    try {
      return await withTimeout(connecting, this.#connectTimeoutMs + 500, 'amqp connect')
    } catch (error) {
      connecting.then((late) => late.close().catch(() => undefined)).catch(() => undefined)
      throw error
    }
  }

  /** `connecting` -> `waiting`: the connect failed; the next address, after a backoff once all failed. */
  #retryLater(attempt: number, error: unknown): void {
    if (this.#closed) return
    const url = redactUrl(this.#address.url)
    this.#at = (this.#at + 1) % this.#addresses.length
    // The broker was never reached, or went away while connecting: one warning now, debug per retry.
    const first = this.#downSince === undefined
    this.#downSince ??= performance.now()
    this.#log?.[first ? 'warn' : 'debug'](
      { connection: this.#name, ...(first ? {} : { attempt }), url, reason: errorMessage(error) },
      'amqp connect failed; retrying',
    )
    this.#connectIn(retryDelay(attempt, this.#addresses.length, this.#baseMs, this.#maxMs), attempt + 1)
  }

  /** -> `waiting`: connect attempt `attempt` after `delayMs` ms. */
  #connectIn(delayMs: number, attempt: number): void {
    const timer = setTimeout(() => void this.#connect(attempt), delayMs)
    this.#state = { name: 'waiting', attempt, timer }
  }

  /** `connecting` -> `connected`: listens to the connection's events, then runs the connected hooks. */
  #opened(connection: ChannelModel): void {
    this.#logErrors(connection, 'amqp connection error', 'amqp event handler threw')
    connection.on('close', (error?: Error) => this.#lost(connection, error ?? new Error('connection closed')))
    connection.on('blocked', (reason: string) =>
      this.#block(connection, String(reason || 'blocked by the broker')),
    )
    connection.on('unblocked', () => this.#unblock(connection))
    this.#state = { name: 'connected', connection }
    const { address: broker, cluster } = brokerNode(connection, this.#address)
    if (this.#downSince === undefined) {
      const url = redactUrl(this.#address.url)
      this.#log?.info({ connection: this.#name, url, broker, cluster }, 'amqp connected')
    } else {
      const downMs = Math.round(performance.now() - this.#downSince)
      this.#log?.info(
        { connection: this.#name, downMs, broker, cluster },
        `amqp connection back after ${downMs} ms`,
      )
    }
    this.#downSince = undefined
    for (const waiter of this.#waiters) waiter.resolve(connection)
    this.#waiters.clear()
    void this.#runConnectedHooks(connection)
  }

  /** The connected hooks in order; one that throws is logged and the others still run. */
  async #runConnectedHooks(connection: ChannelModel): Promise<void> {
    for (const hook of this.#connectedHooks) {
      if (this.current !== connection) return
      await this.#runConnectedHook(hook, connection)
    }
  }

  async #runConnectedHook(hook: ConnectedHook, connection: ChannelModel): Promise<void> {
    try {
      await hook(connection)
    } catch (error) {
      this.#log?.warn({ err: error, connection: this.#name }, 'amqp connected hook failed')
    }
  }

  /** `connected`/`blocked` -> `waiting`: the connection closed or was dropped; reconnect soon. */
  #lost(connection: ChannelModel, error: Error): void {
    if (this.current !== connection) return
    this.#downSince = performance.now()
    const broker = this.#address.hostPort
    this.#log?.warn({ connection: this.#name, broker, reason: error.message }, 'amqp connection lost')
    this.#at = (this.#at + 1) % this.#addresses.length
    this.#releaseUnblockWaiters()
    this.#state = { name: 'idle' }
    for (const hook of this.#lostHooks) {
      try {
        hook(error)
      } catch (hookError) {
        this.#log?.warn({ err: hookError, connection: this.#name }, 'amqp lost hook failed')
      }
    }
    if (this.#state.name === 'idle') this.#connectIn(backoffDelay(0, this.#baseMs, this.#maxMs), 1)
  }

  /** `connected` -> `blocked`. */
  #block(connection: ChannelModel, reason: string): void {
    if (this.current !== connection) return
    this.#log?.warn({ reason, connection: this.#name }, 'amqp connection blocked by the broker')
    this.#state = { name: 'blocked', connection, reason }
  }

  /** `blocked` -> `connected`. */
  #unblock(connection: ChannelModel): void {
    if (this.current !== connection) return
    this.#log?.info({ connection: this.#name }, 'amqp connection unblocked')
    this.#state = { name: 'connected', connection }
    this.#releaseUnblockWaiters()
  }

  #releaseUnblockWaiters(): void {
    for (const waiter of this.#unblockWaiters) waiter()
    this.#unblockWaiters.clear()
  }

  waitUntilUnblocked(timeoutMs: number): Promise<void> {
    if (this.blocked === undefined) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#unblockWaiters.delete(done)
        resolve()
      }
      const timer = setTimeout(done, timeoutMs)
      this.#unblockWaiters.add(done)
    })
  }

  onConnected(hook: ConnectedHook): () => void {
    this.#connectedHooks.add(hook)
    const connection = this.current
    if (connection) void this.#runConnectedHook(hook, connection)
    return () => this.#connectedHooks.delete(hook)
  }

  onLost(hook: (error: Error) => void): () => void {
    this.#lostHooks.add(hook)
    return () => this.#lostHooks.delete(hook)
  }

  waitForConnection(timeoutMs: number): Promise<ChannelModel> {
    const connection = this.current
    if (connection) return Promise.resolve(connection)
    if (this.#state.name === 'closed') return Promise.reject(new Error('amqp connection closed'))
    let waiter: ConnectionWaiter | undefined
    const waiting = new Promise<ChannelModel>((resolve, reject) => {
      waiter = { resolve, reject }
      this.#waiters.add(waiter)
    })
    return withTimeout(waiting, timeoutMs, `amqp connection (${this.#name})`).finally(() => {
      if (waiter) this.#waiters.delete(waiter)
    })
  }

  openChannel(confirm: true, timeoutMs?: number): Promise<ConfirmChannel>
  openChannel(confirm: false, timeoutMs?: number): Promise<Channel>
  async openChannel(confirm: boolean, timeoutMs = this.#connectTimeoutMs): Promise<Channel> {
    const connection = this.current
    if (!connection) throw new Error(`amqp connection (${this.#name}) is not open`)
    const opening: Promise<Channel> = confirm ? connection.createConfirmChannel() : connection.createChannel()
    let channel: Channel
    try {
      channel = await withTimeout(opening, timeoutMs, 'amqp channel open')
    } catch (error) {
      opening.then((late) => late.close().catch(() => undefined)).catch(() => undefined)
      // A channel that cannot open in time means the broker went silent: remake the connection.
      if (this.current === connection) this.drop('channel open timed out')
      throw error
    }
    this.#logErrors(channel, 'amqp channel error', 'amqp channel event handler threw')
    return channel
  }

  /** Logs 'error' at debug (the close that follows is what counts), 'handler-error' at error. */
  #logErrors(emitter: ChannelModel | Channel, errorMessage: string, handlerMessage: string): void {
    emitter.on('error', (error: Error) =>
      this.#log?.debug({ connection: this.#name, reason: error.message }, errorMessage),
    )
    emitter.on('handler-error', (error: Error, event: string) =>
      this.#log?.error({ err: error, event, connection: this.#name }, handlerMessage),
    )
  }

  drop(reason: string): void {
    const connection = this.current
    if (!connection) return
    const error = new Error(`amqp connection dropped: ${reason}`)
    this.#lost(connection, error)
    destroySocket(connection, error)
  }

  /** Any state -> `closed`: stops reconnecting and closes the open connection, if any. */
  async close(): Promise<void> {
    const state = this.#state
    const connection = this.current
    if (state.name === 'waiting') clearTimeout(state.timer)
    this.#state = { name: 'closed' }
    for (const waiter of this.#waiters) waiter.reject(new Error('amqp connection closed'))
    this.#waiters.clear()
    this.#releaseUnblockWaiters()
    if (!connection) return
    try {
      await withTimeout(connection.close(), this.#connectTimeoutMs, 'amqp close')
    } catch {
      destroySocket(connection)
    }
  }
}

/**
 * Creates a resilient AMQP connection (amqplib 2.x promise API). Call `start()`, then use
 * `onConnected` to (re)create channels. Example:
 * `const conn = createAmqpConnection({ url, name: 'relay' }); conn.onConnected(openChannels); conn.start()`.
 */
export function createAmqpConnection(options: AmqpConnectionOptions): AmqpConnection {
  return new ResilientConnection(options)
}
