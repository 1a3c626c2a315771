import amqp from 'amqplib'
import type { ChannelModel, ConsumeMessage } from 'amqplib'
import { uniqueName } from './names.js'

/** One message the tap received. */
export interface TappedMessage {
  /** AMQP `messageId` (the outbox row id). */
  messageId: string | undefined
  routingKey: string
  /** AMQP `type`, the versioned event type. */
  type: string | undefined
  /** AMQP `correlationId`: the saga (order id). */
  correlationId: string | undefined
  /** AMQP `appId`: the publishing service. */
  appId: string | undefined
  /** The parsed JSON body (a CloudEvents envelope), or the raw text when it is not JSON. */
  body: unknown
  properties: ConsumeMessage['properties']
  /** When the tap received it (`Date.now()`, ms since the epoch, comparable with other processes' clocks here). */
  receivedAt: number
}

/** A raw queue bound to an exchange that records everything routed to it. */
export interface TapQueue {
  readonly queue: string
  readonly messages: readonly TappedMessage[]
  /** Message ids in arrival order (duplicates included). */
  ids(): string[]
  /** How many times each message id arrived. */
  countsById(): Map<string, number>
  /** The messages of one saga (AMQP correlationId = the order id), in arrival order. */
  chain(correlationId: string): TappedMessage[]
  /**
   * Resolves with the first message, already here or arriving later, that satisfies `predicate`;
   * rejects after `timeoutMs` ms naming `what`.
   */
  waitFor(predicate: (m: TappedMessage) => boolean, timeoutMs: number, what?: string): Promise<TappedMessage>
  /** Called for every message, after it is recorded. */
  onMessage(listener: (message: TappedMessage) => void): void
  /** Binds the queue again (after the exchange was deleted and remade, its bindings are gone). */
  bind(bindingKeys?: string[]): Promise<void>
  /** Resolves once at least `n` messages arrived; rejects after `timeoutMs` ms saying how many did. */
  waitForCount(n: number, timeoutMs: number): Promise<TappedMessage[]>
  /** Deletes the queue and closes the connection. */
  delete(): Promise<void>
}

/**
 * Declares a durable topic `exchange` (idempotent) and an exclusive queue bound to it with
 * `bindingKeys` (default every key), and records what arrives.
 * Example: `const tap = await tapQueue(AMQP_URL, exchange); await tap.waitForCount(10, 5_000)`.
 */
export async function tapQueue(
  amqpUrl: string,
  exchange: string,
  bindingKeys: string[] = ['#'],
): Promise<TapQueue> {
  const connection: ChannelModel = await amqp.connect(amqpUrl)
  connection.on('error', () => undefined)
  const channel = await connection.createChannel()
  channel.on('error', () => undefined)
  await channel.assertExchange(exchange, 'topic', { durable: true })
  const queue = uniqueName('tap')
  await channel.assertQueue(queue, { exclusive: true, durable: false })
  for (const key of bindingKeys) await channel.bindQueue(queue, exchange, key)
  const messages: TappedMessage[] = []
  const listeners = new Set<(message: TappedMessage) => void>()
  await channel.consume(
    queue,
    (delivery) => {
      if (!delivery) return
      const message = toTappedMessage(delivery)
      messages.push(message)
      for (const listener of [...listeners]) listener(message)
    },
    { noAck: true },
  )

  return {
    queue,
    messages,
    async bind(keys = bindingKeys) {
      for (const key of keys) await channel.bindQueue(queue, exchange, key)
    },
    ids: () => messages.map((m) => m.messageId ?? ''),
    onMessage: (listener) => void listeners.add(listener),
    countsById() {
      const counts = new Map<string, number>()
      for (const m of messages) if (m.messageId) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
      return counts
    },
    chain: (correlationId) => messages.filter((m) => m.correlationId === correlationId),
    waitFor: (predicate, timeoutMs, what = 'message') =>
      waitForMatch(queue, messages, listeners, predicate, timeoutMs, what),
    waitForCount: (n, timeoutMs) => waitForCount(queue, messages, n, timeoutMs),
    async delete() {
      await channel.deleteQueue(queue).catch(() => undefined)
      await connection.close().catch(() => undefined)
    },
  }
}

/** A delivery as the tap records it: AMQP properties by name, the body parsed as JSON when it is JSON. */
function toTappedMessage(delivery: ConsumeMessage): TappedMessage {
  const text = delivery.content.toString('utf8')
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // kept as text
  }
  return {
    messageId: delivery.properties.messageId as string | undefined,
    routingKey: delivery.fields.routingKey,
    type: delivery.properties.type as string | undefined,
    correlationId: delivery.properties.correlationId as string | undefined,
    appId: delivery.properties.appId as string | undefined,
    body,
    properties: delivery.properties,
    receivedAt: Date.now(),
  }
}

/**
 * `TapQueue.waitFor` over the tap's `messages` and `listeners`: the first recorded message matching
 * `predicate`, else the first that arrives; rejects after `timeoutMs` ms naming `what` and `queue`.
 */
function waitForMatch(
  queue: string,
  messages: readonly TappedMessage[],
  listeners: Set<(message: TappedMessage) => void>,
  predicate: (m: TappedMessage) => boolean,
  timeoutMs: number,
  what: string,
): Promise<TappedMessage> {
  const already = messages.find(predicate)
  if (already) return Promise.resolve(already)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      listeners.delete(listener)
      reject(new Error(`tap ${queue}: no ${what} within ${timeoutMs} ms`))
    }, timeoutMs)
    const listener = (m: TappedMessage): void => {
      if (!predicate(m)) return
      clearTimeout(timer)
      listeners.delete(listener)
      resolve(m)
    }
    listeners.add(listener)
  })
}

/**
 * `TapQueue.waitForCount`: polls `messages` every 10 ms until it holds `n`, resolving with a copy;
 * rejects after `timeoutMs` ms saying how many of `n` arrived on `queue`.
 */
function waitForCount(
  queue: string,
  messages: readonly TappedMessage[],
  n: number,
  timeoutMs: number,
): Promise<TappedMessage[]> {
  const deadline = Date.now() + timeoutMs
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (messages.length >= n) return resolve([...messages])
      if (Date.now() > deadline)
        return reject(new Error(`tap ${queue}: ${messages.length} of ${n} messages within ${timeoutMs} ms`))
      setTimeout(check, 10)
    }
    check()
  })
}
