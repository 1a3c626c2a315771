import type { Channel, ConsumeMessage } from 'amqplib'
import type { AmqpConnection } from '../amqp/connection.js'
import { createQueueChannel, type ChannelSession, type QueueChannel } from '../amqp/queue-channel.js'
import type { TransactionClient } from '../types.js'
import type { OrderingSettings } from './ordering.js'
import { createOrderedParts } from './ordering-sweep.js'
import { Batcher, type BatchSettings } from './batch.js'
import { createHandlerPace } from './batch-size.js'
import { noCounters } from './counters.js'
import {
  handleDelivery,
  type DeliveryBatcher,
  type DeliveryControl,
  type DeliveryRuntime,
  type HandlerCounters,
} from './handle-delivery.js'

/** Options of one handler's queue; see `createConsumer` for the public ones. */
export interface HandlerQueueOptions<Tx extends TransactionClient> extends Omit<
  DeliveryRuntime<Tx>,
  'counters' | 'stopping' | 'pace'
> {
  connection: AmqpConnection
  queue: string
  deadLetterQueue: string
  prefetch: number
  /** Deliveries per transaction (inbox/batch.ts); `max` 1 handles each delivery alone. */
  batch: BatchSettings
  /** Longest `stop` waits for running handlers before closing the channel anyway, ms. */
  drainTimeoutMs: number
  /** Declares this queue's topology before each consume (see `QueueChannelOptions.declare`). */
  declare?: ((channel: Channel) => Promise<void>) | undefined
  /** Per-key order's settings, used when the handler has `ordering: 'per-key'`. */
  orderingSettings: OrderingSettings
}

/** One handler queue consumed on its own channel; `createConsumer` runs one per handler. */
export interface HandlerQueue {
  readonly queue: string
  readonly counters: Readonly<HandlerCounters>
  /** The queue's channel lifecycle (state, whether it consumes, since when not). */
  readonly channel: QueueChannel
  /**
   * Deliveries waiting in this queue's batcher for a transaction slot, and whether the batcher
   * holds a place in the slots' queue for them (0 and false without batching).
   */
  readonly batched: { waiting: number; asking: boolean }
  /** Consumes whenever the connection is up. */
  start(): void
  /** Stops: cancel the consumer, let running handlers finish (bounded), close the channel. */
  stop(): Promise<void>
}

/** What one channel's deliveries share: the runtime whose `stopping` ends with the channel, and its batcher. */
interface SessionParts<Tx extends TransactionClient> {
  session: ChannelSession
  runtime: DeliveryRuntime<Tx>
  batcher: DeliveryBatcher | undefined
}

/** The `DeliveryControl` of `delivery` on the channel `session` it came on. */
const controlOf = (delivery: ConsumeMessage, session: ChannelSession, handler: string): DeliveryControl => ({
  delivery: { exchange: delivery.fields.exchange, deliveryTag: delivery.fields.deliveryTag },
  original: delivery,
  ack: () => session.ack(delivery),
  requeue: () => session.requeue(delivery),
  deadLetter: (reason, attempts) => session.deadLetter(delivery, { reason, attempts, handler }),
  putBack: (headers) => session.putBack(delivery, headers),
})

/**
 * Consumes one handler queue on a channel of its own (own prefetch, own errors): each delivery goes
 * through `handleDelivery`; a second delivery of one message id waits for the first's chain.
 */
export function createHandlerQueue<Tx extends TransactionClient>(
  options: HandlerQueueOptions<Tx>,
): HandlerQueue {
  const counters: HandlerCounters = noCounters()
  // Per queue, not per channel: the pace survives reconnects.
  const pace = createHandlerPace()
  const handlerName = options.handler.name
  // The delivery chain of each message id now running (its retries included).
  const chains = new Map<string, Promise<void>>()
  const inFlight = new Set<Promise<void>>()
  let parts: SessionParts<Tx> | undefined
  const ordered = options.handler.ordering === 'per-key'
  const settings = options.orderingSettings
  const ordering = ordered ? createOrderedParts({ ...options, counters, settings }) : undefined

  /** The runtime and batcher of `session`, made on its first delivery: a batch never mixes channels. */
  const partsOf = (session: ChannelSession): SessionParts<Tx> => {
    if (parts?.session === session) return parts
    const runtime: DeliveryRuntime<Tx> = { ...options, counters, pace, stopping: session.gone }
    if (ordering) runtime.ordering = ordering.on(session, runtime as DeliveryRuntime<never>)
    const batcher = options.batch.max > 1 ? new Batcher(runtime, options.batch) : undefined
    parts = { session, runtime, batcher }
    return parts
  }

  const onDelivery = (delivery: ConsumeMessage, session: ChannelSession): void => {
    const { runtime, batcher } = partsOf(session)
    const control = controlOf(delivery, session, handlerName)
    counters.inFlight += 1
    const id = delivery.properties.messageId as string | undefined
    const previous = id === undefined ? undefined : chains.get(id)
    const handle = (): Promise<void> => handleDelivery(delivery, control, runtime, batcher)
    const running = (previous ? previous.then(handle) : handle())
      .catch((error: unknown) =>
        options.logger.error({ err: error, queue: options.queue }, 'delivery pipeline failed unexpectedly'),
      )
      .finally(() => {
        counters.inFlight -= 1
        inFlight.delete(running)
        if (id !== undefined && chains.get(id) === running) chains.delete(id)
      })
    inFlight.add(running)
    if (id !== undefined) chains.set(id, running)
  }

  const channel = createQueueChannel({
    connection: options.connection,
    queue: options.queue,
    deadLetterQueue: options.deadLetterQueue,
    prefetch: options.prefetch,
    declare: options.declare,
    onDelivery,
    drain: () => Promise.allSettled([...inFlight]).then(() => undefined),
    logger: options.logger,
    logFields: { handler: handlerName },
    drainTimeoutMs: options.drainTimeoutMs,
  })

  return {
    queue: options.queue,
    counters,
    channel,
    get batched() {
      const batcher = channel.consuming ? parts?.batcher : undefined
      return { waiting: batcher?.waiting ?? 0, asking: batcher?.asking ?? false }
    },
    start() {
      ordering?.sweep.start()
      channel.start()
    },
    stop() {
      ordering?.sweep.stop()
      return channel.stop()
    },
  }
}
