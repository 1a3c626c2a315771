import { setMaxListeners } from 'node:events'
import type { ConfirmChannel, ConsumeMessage } from 'amqplib'
import { backoffDelay } from '../amqp/backoff.js'
import type { AmqpConnection } from '../amqp/connection.js'
import { withTimeout } from '../amqp/timeout.js'
import type { TransactionClient } from '../types.js'
import { DEAD_LETTER_QUEUE_ARGUMENTS } from '../topology.js'
import { createBatcher, type BatchSettings } from './batch.js'
import { createDeadLetterPublisher, DeadLetterError, type DeadLetterPublisher } from './dead-letter.js'
import {
  handleDelivery,
  type DeliveryBatcher,
  type DeliveryControl,
  type DeliveryRuntime,
  type HandlerCounters,
} from './handle-delivery.js'

/** Options of one handler's queue consumer; see `createConsumer` for the public ones. */
export interface QueueConsumerOptions<Tx extends TransactionClient> extends Omit<
  DeliveryRuntime<Tx>,
  'counters' | 'stopping'
> {
  connection: AmqpConnection
  queue: string
  deadLetterQueue: string
  prefetch: number
  /** Deliveries per transaction (inbox/batch.ts); `max` 1 handles each delivery alone. */
  batch: BatchSettings
  /** Longest `stop` waits for running handlers before closing the channel anyway, ms. */
  drainTimeoutMs: number
  /** Declares the topology again (idempotent); used when the queue turned out to be missing. */
  redeclare?: () => Promise<void>
}

/** One handler queue consumed on its own channel; `createConsumer` runs one per handler. */
export interface QueueConsumer {
  readonly queue: string
  readonly counters: Readonly<HandlerCounters>
  readonly consuming: boolean
  /**
   * Deliveries waiting in this queue's batcher for a transaction slot, and whether the batcher
   * holds a place in the slots' queue for them (0 and false without batching).
   */
  readonly batched: { waiting: number; asking: boolean }
  /** Opens the channel and starts consuming, unless it already does; failures reopen with backoff. */
  open(): Promise<void>
  /** Forgets the channel of a lost connection; the next `open` makes a new one. */
  lost(): void
  /** Stops: cancel the consumer, let running handlers finish (bounded), close the channel. */
  stop(): Promise<void>
}

// Channel operations on a broker that went silent must not hang a stop.
const CHANNEL_OP_TIMEOUT_MS = 5_000
const REOPEN_BASE_MS = 100
const REOPEN_MAX_MS = 5_000

/**
 * Consumes one handler queue. The channel is a confirm channel so dead-letter copies are published
 * on it with confirms; one channel per handler keeps a failing or slow handler from touching the
 * others (each has its own prefetch window and its own channel errors).
 */
export function createQueueConsumer<Tx extends TransactionClient>(
  options: QueueConsumerOptions<Tx>,
): QueueConsumer {
  const { connection, queue, logger } = options
  const handlerName = options.handler.name
  const counters: HandlerCounters = {
    handledTotal: 0,
    duplicatesTotal: 0,
    retriedTotal: 0,
    deadLetteredTotal: 0,
    inFlight: 0,
    batchesTotal: 0,
    batchFallbacksTotal: 0,
  }
  const stopping = new AbortController()
  const inFlight = new Set<Promise<void>>()
  // The delivery chain of each message id now running (its retries included): a redelivered copy
  // waits for it, so one message never runs two chains side by side.
  const chains = new Map<string, Promise<void>>()
  // Aborted when the current channel is gone: its deliveries can no longer be acked, so their
  // retry waits, slot waits and dead-lettering stop (the broker redelivers them).
  let channelGone = new AbortController()
  let channel: ConfirmChannel | undefined
  let batcher: DeliveryBatcher | undefined
  let consumerTag: string | undefined
  let opening = false
  // Set when the queue was found missing (deleted behind our back): declare before consuming again.
  let queueMissing = false
  let reopenAttempt = 0
  let reopenTimer: NodeJS.Timeout | undefined

  const scheduleReopen = (): void => {
    if (stopping.signal.aborted || reopenTimer) return
    reopenTimer = setTimeout(
      () => {
        reopenTimer = undefined
        // Without a connection the connection's own hook reopens once it is back.
        if (connection.isConnected) void open()
      },
      backoffDelay(reopenAttempt++, REOPEN_BASE_MS, REOPEN_MAX_MS),
    )
  }

  const forgetChannel = (): void => {
    channel = undefined
    batcher = undefined
    consumerTag = undefined
    channelGone.abort()
  }

  const closed = (closedChannel: ConfirmChannel): void => {
    if (channel !== closedChannel) return
    forgetChannel()
    if (stopping.signal.aborted) return
    logger.warn({ queue, handler: handlerName }, 'consumer channel closed; reopening')
    scheduleReopen()
  }

  const controlFor = (
    ch: ConfirmChannel,
    publish: DeadLetterPublisher,
    message: ConsumeMessage,
  ): DeliveryControl => ({
    ack() {
      try {
        ch.ack(message)
      } catch (error) {
        // The channel is gone; the broker redelivers and the inbox recognises the duplicate.
        logger.warn({ err: error, queue, messageId: message.properties.messageId as unknown }, 'ack failed')
      }
    },
    requeue() {
      try {
        ch.nack(message, false, true)
      } catch (error) {
        logger.warn({ err: error, queue }, 'requeue failed; the closed channel returns the message anyway')
      }
    },
    async deadLetter(reason, attempts) {
      const details = { queue: options.deadLetterQueue, handler: handlerName, reason, attempts }
      try {
        await publish(message, details)
      } catch (error) {
        if (!(error instanceof DeadLetterError && error.queueMissing)) throw error
        // Someone deleted the DLQ since the topology was declared: remake it (as declareTopology
        // does) rather than hold the message until the next reconnect.
        logger.warn({ queue: options.deadLetterQueue }, 'dead-letter queue missing; declaring it')
        await ch.assertQueue(options.deadLetterQueue, {
          durable: true,
          arguments: DEAD_LETTER_QUEUE_ARGUMENTS,
        })
        await publish(message, details)
      }
    },
  })

  const deliver = (
    ch: ConfirmChannel,
    publish: DeadLetterPublisher,
    runtime: DeliveryRuntime<Tx>,
    batcher: DeliveryBatcher | undefined,
    message: ConsumeMessage | null,
  ): void => {
    if (message === null) {
      // The broker cancelled the consumer (the queue was deleted): forget this channel, close it,
      // and reopen with backoff, declaring the topology first.
      logger.warn({ queue, handler: handlerName }, 'consumer cancelled by the broker')
      queueMissing = true
      if (channel === ch) {
        forgetChannel()
        scheduleReopen()
      }
      ch.close().catch(() => undefined)
      return
    }
    // After stop began, a delivery still in the client buffer is left unacked: the close requeues it.
    if (stopping.signal.aborted) return
    counters.inFlight += 1
    const id = message.properties.messageId as string | undefined
    const previous = id === undefined ? undefined : chains.get(id)
    const handle = (): Promise<void> =>
      handleDelivery(message, controlFor(ch, publish, message), runtime, batcher)
    const running = (previous ? previous.then(handle) : handle())
      .catch((error: unknown) => logger.error({ err: error, queue }, 'delivery pipeline failed unexpectedly'))
      .finally(() => {
        counters.inFlight -= 1
        inFlight.delete(running)
        if (id !== undefined && chains.get(id) === running) chains.delete(id)
      })
    inFlight.add(running)
    if (id !== undefined) chains.set(id, running)
  }

  async function open(): Promise<void> {
    if (stopping.signal.aborted || opening || channel) return
    opening = true
    let ch: ConfirmChannel | undefined
    try {
      if (queueMissing && options.redeclare) {
        await options.redeclare()
        queueMissing = false
      }
      ch = await connection.openChannel(true, CHANNEL_OP_TIMEOUT_MS)
      const opened = ch
      opened.on('close', () => closed(opened))
      await opened.prefetch(options.prefetch)
      const publish = createDeadLetterPublisher(opened)
      channelGone = new AbortController()
      // One runtime per channel, not per delivery: its signal ends with the channel or the consumer.
      const runtime: DeliveryRuntime<Tx> = {
        ...options,
        counters,
        stopping: AbortSignal.any([stopping.signal, channelGone.signal]),
      }
      // Every unacked delivery may listen on it (a slot wait or a retry wait), and the batcher
      // once: without this, a prefetch above 10 prints MaxListenersExceededWarning.
      setMaxListeners(options.prefetch + 2, runtime.stopping)
      // One batcher per channel: a batch never mixes deliveries of two channels.
      const batches = options.batch.max > 1 ? createBatcher(runtime, options.batch) : undefined
      channel = opened
      batcher = batches
      const reply = await opened.consume(
        queue,
        (message) => deliver(opened, publish, runtime, batches, message),
        { noAck: false },
      )
      consumerTag = reply.consumerTag
      if (stopping.signal.aborted) {
        // stop() ran while this channel was opening and could not see it: close it here.
        channel = undefined
        await withTimeout(opened.close(), CHANNEL_OP_TIMEOUT_MS, `close ${queue}`).catch(() => undefined)
        return
      }
      reopenAttempt = 0
      logger.info(
        { queue, handler: handlerName, prefetch: options.prefetch, batchMax: options.batch.max },
        'consuming',
      )
    } catch (error) {
      logger.warn({ err: error, queue, handler: handlerName }, 'could not start consuming; retrying')
      // 404 NOT_FOUND: the queue does not exist (https://www.rabbitmq.com/amqp-0-9-1-reference#constants).
      if ((error as { code?: unknown }).code === 404) queueMissing = true
      if (ch && channel === ch) channel = undefined
      ch?.close().catch(() => undefined)
      scheduleReopen()
    } finally {
      opening = false
    }
  }

  return {
    queue,
    counters,
    get consuming() {
      return channel !== undefined && consumerTag !== undefined
    },
    get batched() {
      return { waiting: batcher?.waiting ?? 0, asking: batcher?.asking ?? false }
    },
    open,
    lost() {
      forgetChannel()
    },
    async stop() {
      stopping.abort()
      clearTimeout(reopenTimer)
      const ch = channel
      if (ch && consumerTag) {
        await withTimeout(ch.cancel(consumerTag), CHANNEL_OP_TIMEOUT_MS, `cancel ${queue}`).catch(
          (error: unknown) => logger.warn({ err: error, queue }, 'consumer cancel failed'),
        )
      }
      consumerTag = undefined
      const drained = Promise.allSettled([...inFlight])
      await withTimeout(drained, options.drainTimeoutMs, `drain ${queue}`).catch(() =>
        logger.warn(
          { queue, inFlight: inFlight.size },
          'handlers still running at stop; their deliveries are redelivered',
        ),
      )
      channel = undefined
      if (ch) await withTimeout(ch.close(), CHANNEL_OP_TIMEOUT_MS, `close ${queue}`).catch(() => undefined)
    },
  }
}
