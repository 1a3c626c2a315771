import type { Channel } from 'amqplib'
import { errorMessage } from './errors.js'

/**
 * What the broker needs for one service: its exchange and, per handler, the routing key it
 * listens to. `HandlerDefinition`s fit this shape, so a service passes its handler list as is.
 * Example: `{ exchange: 'events', queuePrefix: 'inventory', handlers: [reserveStockWhenPaymentProcessed] }`.
 */
export interface TopologySpec {
  /** Durable topic exchange all domain events are published to, e.g. `events`. */
  exchange: string
  /** Queue names are `<queuePrefix>.<handler name>`; usually the service name. */
  queuePrefix: string
  handlers: ReadonlyArray<{ readonly name: string; readonly message: { readonly routingKey: string } }>
  /**
   * Batch recorders (`RecorderDefinition`s, or anything with their name and messages): one queue
   * each, like a handler's, bound to every routing key it records. Default none.
   */
  recorders?: ReadonlyArray<{
    readonly name: string
    readonly messages: ReadonlyArray<{ readonly routingKey: string }>
  }>
  /**
   * Broker-side backstop against crash loops: after this many deliveries of one message that ended
   * without an ack (process crash, lost connection, shutdown), the quorum queue itself moves it to the
   * dead-letter queue. Handler errors are retried in-process and never count here. Default 20.
   * It is a queue argument: changing it for an existing queue needs a policy or a new queue.
   */
  deliveryLimit?: number
  /** Virtual host written into `topologyDefinitions`; default `/`. */
  vhost?: string
}

/** The queue of one handler: `<queuePrefix>.<handler>`. */
export const queueName = (queuePrefix: string, handler: string): string => `${queuePrefix}.${handler}`

/** The dead-letter queue beside a handler queue: `<queue>.dlq`. */
export const deadLetterQueueName = (queue: string): string => `${queue}.dlq`

/** Thrown when the broker refuses a declaration, e.g. a queue that exists with other arguments. */
export class TopologyError extends Error {
  override name = 'TopologyError'
}

const DEFAULT_DELIVERY_LIMIT = 20

/** Arguments of every dead-letter queue. */
export const DEAD_LETTER_QUEUE_ARGUMENTS: Readonly<Record<string, string>> = { 'x-queue-type': 'quorum' }
const HANDLER_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

interface QueueDeclaration {
  name: string
  arguments: Record<string, string | number>
}

interface Plan {
  exchange: string
  queues: QueueDeclaration[]
  bindings: Array<{ queue: string; routingKey: string }>
}

/**
 * The one source of both `declareTopology` and `topologyDefinitions`, so the two never drift.
 * Quorum queues are RabbitMQ's recommendation for data safety
 * (https://www.rabbitmq.com/docs/quorum-queues). A handler queue dead-letters through the default
 * exchange straight into its `.dlq`: that route is only the backstop for `x-delivery-limit`; the
 * consumer dead-letters poison and exhausted messages itself, with the reason in headers.
 */
function plan(spec: TopologySpec): Plan {
  const seen = new Set<string>()
  const recorders = spec.recorders ?? []
  for (const { name } of [...spec.handlers, ...recorders]) {
    if (!HANDLER_NAME.test(name)) throw new TopologyError(`handler name '${name}' is not kebab-case`)
    if (seen.has(name)) throw new TopologyError(`handler name '${name}' is used twice`)
    seen.add(name)
  }
  const deliveryLimit = spec.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT
  const queues: QueueDeclaration[] = []
  const bindings: Plan['bindings'] = []
  const consumers = [
    ...spec.handlers.map((h) => ({ name: h.name, routingKeys: [h.message.routingKey] })),
    ...recorders.map((r) => ({ name: r.name, routingKeys: r.messages.map((m) => m.routingKey) })),
  ]
  for (const consumer of consumers) {
    const queue = queueName(spec.queuePrefix, consumer.name)
    const dlq = deadLetterQueueName(queue)
    queues.push({ name: dlq, arguments: { ...DEAD_LETTER_QUEUE_ARGUMENTS } })
    queues.push({
      name: queue,
      arguments: {
        'x-queue-type': 'quorum',
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': dlq,
        'x-delivery-limit': deliveryLimit,
      },
    })
    for (const routingKey of consumer.routingKeys) bindings.push({ queue, routingKey })
  }
  return { exchange: spec.exchange, queues, bindings }
}

/**
 * Declares the exchange, every handler queue with its dead-letter queue, and the bindings.
 * Idempotent for identical declarations; one that exists with *other* arguments makes the broker
 * refuse with 406 and close the channel: this throws a `TopologyError` naming it. Pass a channel
 * used for nothing else.
 */
export async function declareTopology(channel: Channel, spec: TopologySpec): Promise<void> {
  const { exchange, queues, bindings } = plan(spec)
  const attempt = async (what: string, declare: () => Promise<unknown>): Promise<void> => {
    try {
      await declare()
    } catch (error) {
      throw new TopologyError(`declaring ${what} failed: ${errorMessage(error)}`, { cause: error })
    }
  }
  await attempt(`exchange '${exchange}'`, () => channel.assertExchange(exchange, 'topic', { durable: true }))
  for (const queue of queues) {
    await attempt(`queue '${queue.name}'`, () =>
      channel.assertQueue(queue.name, { durable: true, arguments: queue.arguments }),
    )
  }
  for (const binding of bindings) {
    await attempt(`binding '${binding.queue}' <- '${binding.routingKey}'`, () =>
      channel.bindQueue(binding.queue, exchange, binding.routingKey),
    )
  }
}

/** The RabbitMQ definitions document (the format of `rabbitmqctl import_definitions`), in part. */
export interface TopologyDefinitions {
  exchanges: Array<{
    name: string
    vhost: string
    type: 'topic'
    durable: true
    auto_delete: false
    internal: false
    arguments: Record<string, never>
  }>
  queues: Array<{
    name: string
    vhost: string
    durable: true
    auto_delete: false
    arguments: Record<string, string | number>
  }>
  bindings: Array<{
    source: string
    vhost: string
    destination: string
    destination_type: 'queue'
    routing_key: string
    arguments: Record<string, never>
  }>
}

/**
 * The same topology as `declareTopology`, as a RabbitMQ definitions object for infra/ (load it with
 * `rabbitmqctl import_definitions <file>` or the `load_definitions` setting). Several services'
 * documents merge by concatenating the arrays; the shared exchange then appears once per service,
 * which the broker accepts because the declarations are identical.
 */
export function topologyDefinitions(spec: TopologySpec): TopologyDefinitions {
  const { exchange, queues, bindings } = plan(spec)
  const vhost = spec.vhost ?? '/'
  const durable = { durable: true, auto_delete: false } as const
  return {
    exchanges: [{ name: exchange, vhost, type: 'topic', ...durable, internal: false, arguments: {} }],
    queues: queues.map((queue) => ({ name: queue.name, vhost, ...durable, arguments: queue.arguments })),
    bindings: bindings.map(({ queue, routingKey }) => ({
      source: exchange,
      vhost,
      destination: queue,
      destination_type: 'queue',
      routing_key: routingKey,
      arguments: {},
    })),
  }
}
