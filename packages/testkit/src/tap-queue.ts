import amqp from 'amqplib'
import type { ChannelModel, ConsumeMessage } from 'amqplib'
import { uniqueName } from './names.js'

/** One message the tap received. */
export interface TappedMessage {
  /** AMQP `messageId` (the outbox row id). */
  messageId: string | undefined
  routingKey: string
  /** The parsed JSON body (a CloudEvents envelope), or the raw text when it is not JSON. */
  body: unknown
  properties: ConsumeMessage['properties']
  /** When the tap received it (`performance.now()`, ms). */
  receivedAt: number
}

/** A raw queue bound to an exchange that records everything routed to it. */
export interface TapQueue {
  readonly queue: string
  readonly messages: readonly TappedMessage[]
  /** Message ids in arrival order (duplicates included). */
  ids(): string[]
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
  const listeners: ((message: TappedMessage) => void)[] = []
  await channel.consume(
    queue,
    (delivery) => {
      if (!delivery) return
      const text = delivery.content.toString('utf8')
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // kept as text
      }
      const message: TappedMessage = {
        messageId: delivery.properties.messageId as string | undefined,
        routingKey: delivery.fields.routingKey,
        body,
        properties: delivery.properties,
        receivedAt: performance.now(),
      }
      messages.push(message)
      for (const listener of listeners) listener(message)
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
    onMessage: (listener) => void listeners.push(listener),
    waitForCount(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (messages.length >= n) return resolve([...messages])
          if (Date.now() > deadline)
            return reject(
              new Error(`tap ${queue}: ${messages.length} of ${n} messages within ${timeoutMs} ms`),
            )
          setTimeout(check, 10)
        }
        check()
      })
    },
    async delete() {
      await channel.deleteQueue(queue).catch(() => undefined)
      await connection.close().catch(() => undefined)
    },
  }
}
