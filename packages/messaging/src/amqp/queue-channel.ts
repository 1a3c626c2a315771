import { setMaxListeners } from 'node:events'
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib'
import {
  createDeadLetterPublisher,
  DeadLetterError,
  type DeadLetterDetails,
  type DeadLetterPublisher,
} from '../inbox/dead-letter.js'
import { DEAD_LETTER_QUEUE_ARGUMENTS } from '../topology.js'
import { errorMessage } from '../errors.js'
import type { Logger } from '../types.js'
import { backoffDelay } from './backoff.js'
import type { AmqpConnection } from './connection.js'
import { withTimeout } from './timeout.js'

/** Options of `createQueueChannel`. Durations in milliseconds. */
export interface QueueChannelOptions {
  /** The connection to consume on; its owner starts and closes it. */
  connection: AmqpConnection
  queue: string
  /** Where `ChannelSession.deadLetter` puts copies; declared again when it turns out missing. */
  deadLetterQueue: string
  /** Unacked deliveries the broker may hand this channel at once. */
  prefetch: number
  /**
   * Declares the queue, its dead-letter queue and bindings on a channel of its own before every
   * consume, so a deleted queue is made again; a refusal (406) is logged and consuming goes on.
   * Absent: nothing is declared, and a missing queue is retried until someone declares it.
   */
  declare?: ((channel: Channel) => Promise<void>) | undefined
  /** Called for every delivery of the current channel, in order; settles it on `session`. */
  onDelivery(delivery: ConsumeMessage, session: ChannelSession): void
  /**
   * Resolves once every delivery handed to `onDelivery` is settled or left for redelivery; `stop`
   * awaits it (bounded by `drainTimeoutMs`) between cancelling the consumer and closing the channel.
   */
  drain(): Promise<void>
  logger: Logger
  /** Fields every log line of this queue carries, e.g. `{ handler: 'reserve-stock-when-payment-processed' }`. */
  logFields: Readonly<Record<string, string>>
  /** Longest `stop` waits for running deliveries before closing the channel anyway. Default 15,000. */
  drainTimeoutMs?: number | undefined
}

/** What a delivery is settled on: the channel it came on. Useless once `gone` aborted. */
export interface ChannelSession {
  /** Aborted when this channel is gone (closed, connection lost, stopping): waits for its deliveries should end. */
  readonly gone: AbortSignal
  /** Acks `delivery` (and, with `allUpTo`, every earlier unacked delivery of the channel). Never throws. */
  ack(delivery: ConsumeMessage, allUpTo?: boolean): void
  /** Returns `delivery` to the queue (nack with requeue). Never throws. */
  requeue(delivery: ConsumeMessage): void
  /**
   * Publishes the dead-letter copy of `delivery` to the dead-letter queue, confirmed (declaring the
   * DLQ again if it was deleted). @throws DeadLetterError when the broker did not take it.
   */
  deadLetter(delivery: ConsumeMessage, details: Omit<DeadLetterDetails, 'queue'>): Promise<void>
  /**
   * Publishes a copy of `delivery` with `headers` added back into this queue through the default
   * exchange, confirmed (the caller acks the original after). @throws DeadLetterError as `deadLetter`.
   */
  putBack(delivery: ConsumeMessage, headers: Record<string, unknown>): Promise<void>
}

/**
 * Where a queue channel is in its life: `idle` (before `start`, without a connection); `opening`
 * (declare, open, prefetch, consume); `consuming`; `waiting` to reopen; `stopped` for good.
 */
export type QueueChannelState =
  | { readonly name: 'idle' }
  | { readonly name: 'opening'; readonly gone: AbortController }
  | {
      readonly name: 'consuming'
      readonly channel: ConfirmChannel
      readonly consumerTag: string
      readonly session: ChannelSession
      readonly gone: AbortController
    }
  | { readonly name: 'waiting'; readonly timer: NodeJS.Timeout }
  | { readonly name: 'stopped' }

/** One consumed queue on its own channel; see `createQueueChannel`. */
export interface QueueChannel {
  readonly queue: string
  readonly state: QueueChannelState
  /** True in `consuming`. */
  readonly consuming: boolean
  /**
   * Since when (`performance.now()`, ms) the queue has not been consumed with the connection up;
   * undefined while it consumes, before the first open and while the connection is away.
   */
  readonly notConsumingSince: number | undefined
  /** Why it last stopped consuming or failed to open, for health; undefined while it consumes. */
  readonly problem: string | undefined
  /** Consumes whenever the connection is up: now, and after every reconnect. */
  start(): void
  /** Cancels the consumer, waits for running deliveries (bounded), closes the channel. Idempotent. */
  stop(): Promise<void>
}

// Channel operations on a broker that went silent must not hang a stop.
const CHANNEL_OP_TIMEOUT_MS = 5_000
const REOPEN_BASE_MS = 100
const REOPEN_MAX_MS = 5_000
/** 404 NOT_FOUND: https://www.rabbitmq.com/amqp-0-9-1-reference#constants */
const NOT_FOUND = 404

/**
 * The lifecycle of a consumed queue, for handler queues and recorders (`QueueChannelState`, one
 * method per transition). A closed channel, a broker cancel or a failed open reopens with backoff
 * (100 ms doubling to 5 s), declaring first.
 */
class ConsumedQueue implements QueueChannel {
  #state: QueueChannelState = { name: 'idle' }
  readonly #options: QueueChannelOptions
  readonly #stopping = new AbortController()
  readonly #unsubscribe: Array<() => void> = []
  #started = false
  #reopenAttempt = 0
  #notConsumingSince: number | undefined
  #problem: string | undefined
  #stopped: Promise<void> | undefined

  constructor(options: QueueChannelOptions) {
    this.#options = options
  }

  get queue(): string {
    return this.#options.queue
  }

  get state(): QueueChannelState {
    return this.#state
  }

  get consuming(): boolean {
    return this.#state.name === 'consuming'
  }

  get notConsumingSince(): number | undefined {
    return this.#notConsumingSince
  }

  get problem(): string | undefined {
    return this.#problem
  }

  start(): void {
    if (this.#started) return
    this.#started = true
    this.#problem = 'not consuming yet'
    const { connection } = this.#options
    this.#unsubscribe.push(connection.onLost(() => this.#connectionLost()))
    this.#unsubscribe.push(connection.onConnected(() => this.#open()))
  }

  /** `idle`/`waiting` -> `opening` -> `consuming`, or -> `waiting` when any step fails. */
  async #open(): Promise<void> {
    if (this.#state.name !== 'idle' && this.#state.name !== 'waiting') return
    if (this.#state.name === 'waiting') clearTimeout(this.#state.timer)
    const opening = { name: 'opening', gone: new AbortController() } as const
    this.#state = opening
    this.#notConsumingSince ??= performance.now()
    const { connection, queue, prefetch } = this.#options
    let channel: ConfirmChannel | undefined
    try {
      await this.#declare()
      channel = await connection.openChannel(true, CHANNEL_OP_TIMEOUT_MS)
      const opened = channel
      const session = this.#newSession(opened, opening.gone)
      opened.on('close', () => this.#channelClosed(opened, session))
      await opened.prefetch(prefetch)
      const reply = await opened.consume(queue, (delivery) => this.#deliver(opened, session, delivery), {
        noAck: false,
      })
      // stop(), or a lost connection, came while this channel was opening: it is not ours to keep.
      if (this.#state !== opening) {
        opening.gone.abort()
        await withTimeout(opened.close(), CHANNEL_OP_TIMEOUT_MS, `close ${queue}`).catch(() => undefined)
        return
      }
      this.#consuming({
        name: 'consuming',
        channel: opened,
        consumerTag: reply.consumerTag,
        session,
        gone: opening.gone,
      })
    } catch (error) {
      opening.gone.abort()
      channel?.close().catch(() => undefined)
      if (this.#state !== opening) return
      const missing = (error as { code?: unknown }).code === NOT_FOUND
      this.#waitToReopen(
        missing ? `queue ${queue} does not exist` : `could not consume: ${errorMessage(error)}`,
      )
    }
  }

  /** Declares this queue's topology on a throwaway channel; a refusal is logged, not fatal. */
  async #declare(): Promise<void> {
    const declare = this.#options.declare
    if (!declare) return
    const channel = await this.#options.connection.openChannel(false, CHANNEL_OP_TIMEOUT_MS)
    try {
      await withTimeout(declare(channel), CHANNEL_OP_TIMEOUT_MS, `declare ${this.#options.queue}`)
    } catch (error) {
      // Consume anyway: a queue declared with other arguments (a policy, an older deploy) still works.
      this.#options.logger.error(
        { ...this.#options.logFields, queue: this.#options.queue, reason: errorMessage(error) },
        'topology declaration failed',
      )
    } finally {
      await channel.close().catch(() => undefined)
    }
  }

  /** A session for `channel`: ack, requeue and dead-letter on it, and a signal that ends with it. */
  #newSession(channel: ConfirmChannel, gone: AbortController): ChannelSession & { closeReason?: string } {
    const signal = AbortSignal.any([this.#stopping.signal, gone.signal])
    // Every unacked delivery may listen on it (a slot wait or a retry wait), and a batcher once, or
    // for an ordered handler the drain of each handled delivery's key (its slot wait) and the sweep's:
    // without this, a prefetch above 10 prints MaxListenersExceededWarning.
    setMaxListeners(2 * this.#options.prefetch + 2, signal)
    const publish = createDeadLetterPublisher(channel)
    const { logger, logFields, queue, deadLetterQueue } = this.#options
    const session: ChannelSession & { closeReason?: string } = {
      gone: signal,
      ack(delivery, allUpTo = false) {
        try {
          channel.ack(delivery, allUpTo)
        } catch (error) {
          // The channel is gone (amqplib throws only then): the redelivery is a duplicate. Info: its
          // connection logs the outage once, and this is its expected consequence.
          const messageId = delivery.properties.messageId as unknown
          logger.info({ ...logFields, queue, messageId, reason: errorMessage(error) }, 'ack failed')
        }
      },
      requeue(delivery) {
        try {
          channel.nack(delivery, false, true)
        } catch {
          // The closed channel returns the delivery to the queue anyway.
        }
      },
      deadLetter: (delivery, details) =>
        deadLetterOnce(channel, publish, delivery, { ...details, queue: deadLetterQueue }, logger),
      putBack: (delivery, headers) => publish.copy(delivery, queue, headers),
    }
    // The broker closes a channel with a reason (404, 406, ...) as a channel 'error' before 'close';
    // a close without one is the connection's, which logs it once for every channel.
    channel.on('error', (error: Error) => {
      session.closeReason = error.message
    })
    return session
  }

  /** `opening` -> `consuming`. */
  #consuming(state: Extract<QueueChannelState, { name: 'consuming' }>): void {
    this.#state = state
    this.#reopenAttempt = 0
    this.#notConsumingSince = undefined
    this.#problem = undefined
    const { logger, logFields, queue, prefetch } = this.#options
    logger.info({ ...logFields, queue, prefetch }, 'consuming')
  }

  /** One delivery of `channel`; `null` is the broker's cancel (the queue was deleted). */
  #deliver(channel: ConfirmChannel, session: ChannelSession, delivery: ConsumeMessage | null): void {
    if (delivery === null) {
      this.#cancelledByBroker(channel)
      return
    }
    // After stop began, a delivery still in the client's buffer stays unacked: the close requeues it.
    if (this.#stopping.signal.aborted || session.gone.aborted) return
    this.#options.onDelivery(delivery, session)
  }

  /** `consuming` -> `waiting`: the broker cancelled the consumer; declare and consume again. */
  #cancelledByBroker(channel: ConfirmChannel): void {
    const { logger, logFields, queue } = this.#options
    logger.warn({ ...logFields, queue }, 'consumer cancelled by the broker')
    if (!this.#owns(channel)) return
    this.#forgetChannel()
    channel.close().catch(() => undefined)
    this.#waitToReopen(`the broker cancelled the consumer of ${queue} (queue deleted?)`)
  }

  /** `consuming` -> `waiting`: the channel closed (a channel error, or closed by the broker). */
  #channelClosed(channel: ConfirmChannel, session: { closeReason?: string }): void {
    if (!this.#owns(channel)) return
    this.#forgetChannel()
    const { logger, logFields, queue } = this.#options
    const reason = session.closeReason
    if (reason === undefined) logger.debug({ ...logFields, queue }, 'consumer channel closed; reopening')
    else logger.warn({ ...logFields, queue, reason }, 'consumer channel closed; reopening')
    this.#waitToReopen(`the channel of ${queue} closed${reason === undefined ? '' : `: ${reason}`}`)
  }

  /** Any open state -> `idle`: the connection went; its `onConnected` hook opens again. */
  #connectionLost(): void {
    if (this.#state.name === 'stopped') return
    if (this.#state.name === 'waiting') clearTimeout(this.#state.timer)
    this.#forgetChannel()
    this.#state = { name: 'idle' }
    this.#notConsumingSince = undefined
    this.#problem = 'the broker connection is down'
  }

  #owns(channel: ConfirmChannel): boolean {
    return this.#state.name === 'consuming' && this.#state.channel === channel
  }

  /** Ends the current session: its deliveries' waits end, and they are left for redelivery. */
  #forgetChannel(): void {
    const state = this.#state
    if (state.name === 'opening' || state.name === 'consuming') state.gone.abort()
    if (state.name === 'consuming') this.#state = { name: 'idle' }
  }

  /** -> `waiting`: reopen after a backoff (or once the connection is back, if it is not now). */
  #waitToReopen(problem: string): void {
    if (this.#stopping.signal.aborted) return
    this.#notConsumingSince ??= performance.now()
    this.#problem = problem
    const delay = backoffDelay(this.#reopenAttempt++, REOPEN_BASE_MS, REOPEN_MAX_MS)
    const timer = setTimeout(() => {
      // Without a connection the connection's own hook reopens once it is back.
      if (this.#options.connection.isConnected) void this.#open()
      else if (this.#state.name === 'waiting') this.#state = { name: 'idle' }
    }, delay)
    this.#state = { name: 'waiting', timer }
  }

  /** Any state -> `stopped`: cancel, drain (bounded), close. */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop()
    return this.#stopped
  }

  async #stop(): Promise<void> {
    this.#stopping.abort()
    this.#unsubscribe.forEach((off) => off())
    const state = this.#state
    if (state.name === 'waiting') clearTimeout(state.timer)
    this.#state = { name: 'stopped' }
    const { logger, logFields, queue, drainTimeoutMs = 15_000 } = this.#options
    if (state.name === 'consuming') {
      await withTimeout(
        state.channel.cancel(state.consumerTag),
        CHANNEL_OP_TIMEOUT_MS,
        `cancel ${queue}`,
      ).catch((error: unknown) =>
        logger.warn({ ...logFields, queue, reason: errorMessage(error) }, 'consumer cancel failed'),
      )
    }
    await withTimeout(this.#options.drain(), drainTimeoutMs, `drain ${queue}`).catch(() =>
      logger.warn({ ...logFields, queue }, 'deliveries still running at stop; they are redelivered'),
    )
    if (state.name === 'opening' || state.name === 'consuming') state.gone.abort()
    if (state.name === 'consuming')
      await withTimeout(state.channel.close(), CHANNEL_OP_TIMEOUT_MS, `close ${queue}`).catch(() => undefined)
  }
}

/**
 * Publishes one dead-letter copy, confirmed; when the broker returns it (the DLQ was deleted),
 * declares the DLQ and publishes once more. @throws DeadLetterError when the broker did not take it.
 */
async function deadLetterOnce(
  channel: ConfirmChannel,
  publish: DeadLetterPublisher,
  delivery: ConsumeMessage,
  details: DeadLetterDetails,
  logger: Logger,
): Promise<void> {
  try {
    await publish(delivery, details)
  } catch (error) {
    if (!(error instanceof DeadLetterError && error.queueMissing)) throw error
    logger.warn({ queue: details.queue }, 'dead-letter queue missing; declaring it')
    await channel.assertQueue(details.queue, { durable: true, arguments: DEAD_LETTER_QUEUE_ARGUMENTS })
    await publish(delivery, details)
  }
}

/**
 * Creates the lifecycle of one consumed queue (see `ConsumedQueue`): call `start()`; deliveries
 * reach `onDelivery` with the session (channel) they came on.
 */
export function createQueueChannel(options: QueueChannelOptions): QueueChannel {
  return new ConsumedQueue(options)
}
