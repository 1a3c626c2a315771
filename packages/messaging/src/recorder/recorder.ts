import type { Channel, ConsumeMessage } from 'amqplib'
import type { AmqpConnection } from '../amqp/connection.js'
import { createQueueChannel, type ChannelSession, type QueueChannel } from '../amqp/queue-channel.js'
import type { RetryPolicy } from '../inbox/retry-policy.js'
import type { Signals } from '../signals.js'
import { deadLetterQueueName, declareTopology, queueName } from '../topology.js'
import type { Logger } from '../types.js'
import { flushBatch, type FlushControl, type FlushRuntime } from './flush.js'
import type { Queryable, RecorderCounters, RecorderDefinition } from './types.js'

/** Options of `createBatchRecorder`. */
export interface BatchRecorderOptions {
  definition: RecorderDefinition
  /** Consumed on; the caller starts and closes it. */
  connection: AmqpConnection
  /** Where `record` runs its statement (the service's pg Pool). */
  db: Queryable
  exchange: string
  queuePrefix: string
  signals: Signals
  logger: Logger
  /** Most messages per `record` call. Default 100. */
  maxBatch?: number
  /** Quorum-queue `x-delivery-limit`, the broker's backstop against crash loops. Default 20. */
  deliveryLimit?: number | undefined
  /** Backoff while the database is unavailable, ms. Default 500 doubling to 30,000. */
  policy?: Pick<RetryPolicy, 'baseMs' | 'maxMs'>
  /** Longest `stop` waits for the running flush, ms. Default 15,000. */
  drainTimeoutMs?: number
}

/** One recorder's consumer; see `createBatchRecorder`. */
export interface BatchRecorder {
  /** The definition's name. */
  readonly name: string
  readonly queue: string
  readonly counters: Readonly<RecorderCounters>
  /** The queue's channel lifecycle (state, whether it consumes, since when not). */
  readonly channel: QueueChannel
  readonly consuming: boolean
  /** Consumes whenever the connection is up (now and after every reconnect). */
  start(): void
  /** Cancels the consumer, lets the running flush finish (bounded), closes the channel. Idempotent. */
  stop(): Promise<void>
}

/** The deliveries of one channel waiting for the next flush, and what settles them. */
interface Buffered {
  session: ChannelSession
  control: FlushControl
  runtime: FlushRuntime
  deliveries: ConsumeMessage[]
  /** The open wait window's timer: it starts the flush, unless the batch fills first. */
  window: NodeJS.Timeout | undefined
}

/**
 * The flushes of one recorder: deliveries buffered per channel, one flush at a time, the next one
 * started when the last is done. `onDelivery` and `drain` are its queue channel's.
 */
function createFlusher(
  base: Omit<FlushRuntime, 'stopping'>,
  maxBatch: number,
  windowMs: number,
  queue: string,
) {
  let buffered: Buffered | undefined
  let flushing: Promise<void> | undefined
  // A batch of one has nothing to wait for.
  const windowed = windowMs > 0 && maxBatch > 1

  /** The buffer of `session`'s channel; a new channel drops the old one's (the broker redelivers them). */
  const bufferOf = (session: ChannelSession): Buffered => {
    if (buffered?.session === session) return buffered
    const handler = base.definition.name
    const control: FlushControl = {
      ack: (delivery, upTo) => session.ack(delivery, upTo),
      requeue: (delivery) => session.requeue(delivery),
      deadLetter: (delivery, reason) => session.deadLetter(delivery, { reason, attempts: 0, handler }),
    }
    buffered = {
      session,
      control,
      runtime: { ...base, stopping: session.gone },
      deliveries: [],
      window: undefined,
    }
    return buffered
  }

  /** Opens `buffer`'s wait window: in `windowMs` its deliveries are flushed, full or not. */
  const openWindow = (buffer: Buffered): void => {
    // Unref'd: a window never keeps the process up; a stopped recorder's flushNext does nothing.
    buffer.window = setTimeout(() => {
      buffer.window = undefined
      flushNext(buffer)
    }, windowMs).unref()
  }

  /**
   * Starts the next flush of `buffer` unless one runs, or its window is open and the batch not full;
   * after a flush, the current channel's buffer is next (its deliveries may have waited for it).
   */
  const flushNext = (buffer: Buffered): void => {
    if (flushing || buffer.deliveries.length === 0 || buffer.session.gone.aborted) return
    if (buffer.window && buffer.deliveries.length < maxBatch) return
    clearTimeout(buffer.window)
    buffer.window = undefined
    const batch = buffer.deliveries.splice(0, maxBatch)
    if (buffer.deliveries.length > 0 && windowed) openWindow(buffer)
    flushing = flushBatch(batch, buffer.control, buffer.runtime)
      .then(() => undefined)
      .catch((error: unknown) =>
        base.logger.error({ err: error, queue }, 'recorder flush failed unexpectedly'),
      )
      .finally(() => {
        flushing = undefined
        if (buffered) flushNext(buffered)
      })
  }

  return {
    onDelivery: (delivery: ConsumeMessage, session: ChannelSession): void => {
      const buffer = bufferOf(session)
      const count = buffer.deliveries.push(delivery)
      if (count === 1 && windowed) openWindow(buffer)
      else if (count === 1) setImmediate(() => flushNext(buffer))
      else if (count === maxBatch && buffer.window) setImmediate(() => flushNext(buffer))
    },
    drain: (): Promise<void> => flushing ?? Promise.resolve(),
  }
}

/**
 * Consumes a `RecorderDefinition`'s queue (a `QueueChannel`) and records deliveries in batches: a
 * delivery starts a flush on the next event-loop turn (or after `windowMs`), a full batch
 * (`maxBatch`) at once, and deliveries arriving during a flush form the next; at low load a batch is
 * one message. Prefetch is twice `maxBatch`. One flush runs at a time, which makes its `multiple`
 * ack safe.
 */
export function createBatchRecorder(options: BatchRecorderOptions): BatchRecorder {
  const { definition, logger } = options
  const queue = queueName(options.queuePrefix, definition.name)
  const maxBatch = options.maxBatch ?? 100
  const counters: RecorderCounters = {
    recordedTotal: 0,
    batchesTotal: 0,
    splitTotal: 0,
    deadLetteredTotal: 0,
  }
  const flusher = createFlusher(
    {
      definition,
      exchange: options.exchange,
      queue,
      db: options.db,
      contracts: new Map(
        definition.messages.flatMap((m) => [[m.routingKey, m] as const, [m.type, m] as const]),
      ),
      counters,
      signals: options.signals,
      logger,
      policy: { baseMs: 500, maxMs: 30_000, ...options.policy },
    },
    maxBatch,
    definition.windowMs ?? 0,
    queue,
  )
  const spec = {
    exchange: options.exchange,
    queuePrefix: options.queuePrefix,
    handlers: [],
    recorders: [definition],
    deliveryLimit: options.deliveryLimit,
  }
  const channel = createQueueChannel({
    connection: options.connection,
    queue,
    deadLetterQueue: deadLetterQueueName(queue),
    prefetch: maxBatch * 2,
    declare: (setup: Channel) => declareTopology(setup, spec),
    onDelivery: flusher.onDelivery,
    drain: flusher.drain,
    logger,
    logFields: { recorder: definition.name },
    drainTimeoutMs: options.drainTimeoutMs,
  })

  return {
    name: definition.name,
    queue,
    counters,
    channel,
    get consuming() {
      return channel.consuming
    },
    start: () => channel.start(),
    stop: () => channel.stop(),
  }
}
