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
   * The quorum queue's `x-delivery-limit`: after this many deliveries of one message ended without an
   * ack (crash, lost connection), the broker dead-letters it; handler errors never count. Default 20.
   * A queue argument: changing it for an existing queue needs a policy or a new queue.
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
 * The one source of `declareTopology` and `topologyDefinitions`. Quorum queues, as RabbitMQ
 * recommends; a handler queue dead-letters through the default exchange into its `.dlq`, only the
 * backstop for `x-delivery-limit` (the consumer dead-letters with the reason itself).
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
 * Declares the exchange, every handler queue with its dead-letter queue, and the bindings, on a
 * channel used for nothing else. Idempotent; a declaration that exists with other arguments is
 * refused (406): this throws a `TopologyError` naming it.
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
 * The topology of `declareTopology` as a RabbitMQ definitions object for infra/ (`rabbitmqctl
 * import_definitions`). Several services' documents merge by concatenating the arrays.
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
