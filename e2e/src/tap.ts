import amqp from 'amqplib'

/** One message the tap saw on the exchange. */
export interface TappedMessage {
  messageId: string | undefined
  routingKey: string
  type: string | undefined
  correlationId: string | undefined
  /** The publishing service (AMQP appId). */
  appId: string | undefined
  /** Local clock when the tap received it (ms since epoch). */
  receivedAt: number
  body: unknown
}

/**
 * A raw tap: an exclusive, auto-delete queue bound to every routing key (`#`) of the run's exchange,
 * on its own connection straight to the broker (never through the fault proxy). Records everything
 * it sees so tests can follow a chain and count each message id.
 */
export class Tap {
  readonly messages: TappedMessage[] = []
  private readonly listeners = new Set<(m: TappedMessage) => void>()

  private constructor(
    private readonly connection: amqp.ChannelModel,
    readonly queue: string,
  ) {}

  /**
   * Connects, asserts the exchange (topic, durable: the same declaration the services make, so the
   * tap can bind before they start) and starts consuming.
   */
  static async open(amqpUrl: string, exchange: string): Promise<Tap> {
    const connection = await amqp.connect(amqpUrl)
    const channel = await connection.createChannel()
    await channel.assertExchange(exchange, 'topic', { durable: true })
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true })
    await channel.bindQueue(queue, exchange, '#')
    const tap = new Tap(connection, queue)
    await channel.consume(queue, (msg) => msg && tap.record(msg), { noAck: true })
    return tap
  }

  private record(msg: amqp.ConsumeMessage): void {
    let body: unknown
    try {
      body = JSON.parse(msg.content.toString('utf8'))
    } catch {
      body = msg.content.toString('utf8')
    }
    const m: TappedMessage = {
      messageId: msg.properties.messageId as string | undefined,
      routingKey: msg.fields.routingKey,
      type: msg.properties.type as string | undefined,
      correlationId: msg.properties.correlationId as string | undefined,
      appId: msg.properties.appId as string | undefined,
      receivedAt: Date.now(),
      body,
    }
    this.messages.push(m)
    for (const listener of this.listeners) listener(m)
  }

  /** Messages of one saga (AMQP correlationId = the order id). */
  chain(correlationId: string): TappedMessage[] {
    return this.messages.filter((m) => m.correlationId === correlationId)
  }

  /** How many times each message id was seen. */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>()
    for (const m of this.messages)
      if (m.messageId) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
    return counts
  }

  /**
   * Resolves with the first message (already seen or arriving later) that satisfies `predicate`;
   * rejects after `timeoutMs`.
   */
  waitFor(
    predicate: (m: TappedMessage) => boolean,
    timeoutMs: number,
    what = 'message',
  ): Promise<TappedMessage> {
    const already = this.messages.find(predicate)
    if (already) return Promise.resolve(already)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener)
        reject(new Error(`tap: no ${what} within ${timeoutMs} ms`))
      }, timeoutMs)
      const listener = (m: TappedMessage): void => {
        if (!predicate(m)) return
        clearTimeout(timer)
        this.listeners.delete(listener)
        resolve(m)
      }
      this.listeners.add(listener)
    })
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined)
  }
}
