import type { ConfirmChannel, ConsumeMessage } from 'amqplib'
import type { AmqpConnection } from '../amqp/connection.js'
import { withTimeout } from '../amqp/timeout.js'
import { createDeadLetterPublisher, DeadLetterError } from '../inbox/dead-letter.js'
import type { RetryPolicy } from '../inbox/retry-policy.js'
import type { Signals } from '../signals.js'
import { DEAD_LETTER_QUEUE_ARGUMENTS, deadLetterQueueName, declareTopology, queueName } from '../topology.js'
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
  deliveryLimit?: number
  /** Backoff while the database is unavailable, ms. Default 500 doubling to 30,000. */
  policy?: Pick<RetryPolicy, 'baseMs' | 'maxMs'>
}

/** One recorder's consumer; see `createBatchRecorder`. */
export interface BatchRecorder {
  /** The definition's name. */
  readonly name: string
  readonly queue: string
  readonly counters: Readonly<RecorderCounters>
  readonly consuming: boolean
  /** Consumes whenever the connection is up (now and after every reconnect). */
  start(): void
  /** Cancels the consumer, lets the running flush finish (bounded), closes the channel. Idempotent. */
  stop(): Promise<void>
}

const CHANNEL_OP_TIMEOUT_MS = 5_000

/**
 * Consumes a `RecorderDefinition`'s queue on its own confirm channel and records deliveries in
 * batches: a delivery starts a flush on the next turn of the event loop, so every delivery that
 * arrived in the same socket read joins it; deliveries that arrive while a flush runs form the
 * next one (up to `maxBatch`). No wait window: at low load a batch is one message and adds no
 * latency; under load batches grow by themselves. Prefetch is twice `maxBatch` so the next batch
 * fills while one is written. One flush runs at a time, which is what makes the flush's
 * `multiple` ack safe.
 */
export function createBatchRecorder(options: BatchRecorderOptions): BatchRecorder {
  const { definition, connection, logger } = options
  const queue = queueName(options.queuePrefix, definition.name)
  const maxBatch = options.maxBatch ?? 100
  const counters: RecorderCounters = {
    recordedTotal: 0,
    batchesTotal: 0,
    splitTotal: 0,
    deadLetteredTotal: 0,
  }
  const stopping = new AbortController()
  const runtime: FlushRuntime = {
    definition,
    db: options.db,
    contracts: new Map(
      definition.messages.flatMap((m) => [[m.routingKey, m] as const, [m.type, m] as const]),
    ),
    counters,
    signals: options.signals,
    logger,
    policy: { maxAttempts: 1, baseMs: 500, maxMs: 30_000, ...options.policy },
    stopping: stopping.signal,
  }
  let channel: ConfirmChannel | undefined
  let consumerTag: string | undefined
  let buffer: ConsumeMessage[] = []
  let flushing: Promise<void> | undefined
  const unsubscribe: Array<() => void> = []

  const controlFor = (ch: ConfirmChannel): FlushControl => {
    const publish = createDeadLetterPublisher(ch)
    const dlq = deadLetterQueueName(queue)
    return {
      ack(delivery, upTo) {
        try {
          ch.ack(delivery, upTo)
        } catch (error) {
          // The channel is gone: the broker redelivers, and recording again changes nothing.
          logger.warn({ err: error, queue }, 'ack failed')
        }
      },
      requeue(delivery) {
        try {
          ch.nack(delivery, false, true)
        } catch {
          // The closed channel returns the delivery anyway.
        }
      },
      async deadLetter(delivery, reason) {
        const details = { queue: dlq, handler: definition.name, reason, attempts: 0 }
        try {
          await publish(delivery, details)
        } catch (error) {
          if (!(error instanceof DeadLetterError && error.queueMissing)) throw error
          await ch.assertQueue(dlq, { durable: true, arguments: DEAD_LETTER_QUEUE_ARGUMENTS })
          await publish(delivery, details)
        }
      },
    }
  }

  const drain = (ch: ConfirmChannel, control: FlushControl): void => {
    if (flushing || buffer.length === 0) return
    const batch = buffer.slice(0, maxBatch)
    buffer = buffer.slice(batch.length)
    flushing = flushBatch(batch, control, runtime)
      .then(() => undefined)
      .catch((error: unknown) => logger.error({ err: error, queue }, 'recorder flush failed unexpectedly'))
      .finally(() => {
        flushing = undefined
        // Deliveries of a channel that closed meanwhile are redelivered on the next one.
        if (channel === ch && !stopping.signal.aborted) drain(ch, control)
        else buffer = []
      })
  }

  let opening = false
  async function open(): Promise<void> {
    // The reconnect hook and a closed channel's retry may both call this; one channel at a time.
    if (stopping.signal.aborted || channel || opening) return
    opening = true
    let opened: ConfirmChannel | undefined
    try {
      const setup = await connection.openChannel(false, CHANNEL_OP_TIMEOUT_MS)
      // The topology plan declares a recorder's queue, DLQ and bindings exactly as a handler's.
      await declareTopology(setup, {
        exchange: options.exchange,
        queuePrefix: options.queuePrefix,
        handlers: [],
        recorders: [definition],
        deliveryLimit: options.deliveryLimit,
      }).finally(() => setup.close().catch(() => undefined))
      const ch = await connection.openChannel(true, CHANNEL_OP_TIMEOUT_MS)
      opened = ch
      ch.on('close', () => {
        if (channel !== ch) return
        channel = undefined
        consumerTag = undefined
        buffer = []
        if (!stopping.signal.aborted && connection.isConnected) setTimeout(() => void open(), 500)
      })
      await ch.prefetch(maxBatch * 2)
      const control = controlFor(ch)
      channel = ch
      const reply = await ch.consume(queue, (delivery) => {
        if (delivery === null || stopping.signal.aborted) return
        buffer.push(delivery)
        if (buffer.length === 1) setImmediate(() => drain(ch, control))
      })
      consumerTag = reply.consumerTag
      logger.info({ queue, recorder: definition.name, prefetch: maxBatch * 2 }, 'recording')
    } catch (error) {
      logger.warn({ err: error, queue }, 'could not start recording; retrying')
      if (opened && channel === opened) channel = undefined
      opened?.close().catch(() => undefined)
      if (!stopping.signal.aborted) setTimeout(() => void open(), 1_000)
    } finally {
      opening = false
    }
  }

  return {
    name: definition.name,
    queue,
    counters,
    get consuming() {
      return channel !== undefined && consumerTag !== undefined
    },
    start() {
      unsubscribe.push(
        connection.onLost(() => {
          channel = undefined
          consumerTag = undefined
          buffer = []
        }),
      )
      unsubscribe.push(connection.onConnected(open))
    },
    async stop() {
      if (stopping.signal.aborted) return
      stopping.abort()
      unsubscribe.forEach((off) => off())
      const ch = channel
      if (ch && consumerTag)
        await withTimeout(ch.cancel(consumerTag), CHANNEL_OP_TIMEOUT_MS, 'cancel').catch(() => undefined)
      if (flushing) await withTimeout(flushing, 15_000, `drain ${queue}`).catch(() => undefined)
      channel = undefined
      if (ch) await withTimeout(ch.close(), CHANNEL_OP_TIMEOUT_MS, `close ${queue}`).catch(() => undefined)
    },
  }
}
