import amqp from 'amqplib'
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib'
import { eventually } from '../wait.js'

/**
 * A tap that outlives a broker node: a quorum queue (replicated like the fleet's own) bound to the
 * exchange with `#`, consumed with acknowledgements over a list of node URLs. When its connection
 * closes (its node killed, stopped or cut off; a 5 s heartbeat notices a silent link) it connects
 * to the next URL and consumes again; what the queue held meanwhile is delivered then. A message
 * redelivered after a lost ack is not counted twice (its `redelivered` flag); a copy published
 * again by a relay is (a new message in the queue).
 */
export class ClusterTap {
  private readonly counts = new Map<string, number>()
  private connection: ChannelModel | undefined
  private channel: Channel | undefined
  private next = 0
  private closed = false
  /** Reconnections after the first connection, for the report. */
  reconnects = 0

  private constructor(
    private readonly urls: readonly string[],
    private readonly exchange: string,
    readonly queue: string,
  ) {}

  /** Declares the queue and binding and starts consuming; rejects when no URL answers within 60 s. */
  static async start(urls: readonly string[], exchange: string, queue: string): Promise<ClusterTap> {
    if (urls.length === 0) throw new Error('ClusterTap needs at least one broker URL')
    const tap = new ClusterTap(urls, exchange, queue)
    await eventually('the tap connected to a node', () => tap.connect().then(() => true), {
      timeoutMs: 60_000,
      intervalMs: 1_000,
    })
    return tap
  }

  /** How many times each message id arrived (redeliveries of one queued message counted once). */
  countsById(): Map<string, number> {
    return new Map(this.counts)
  }

  /** Messages counted so far. */
  get size(): number {
    let n = 0
    for (const c of this.counts.values()) n += c
    return n
  }

  private async connect(): Promise<void> {
    const url = this.urls[this.next++ % this.urls.length] as string
    const connection = await amqp.connect(`${url}${url.includes('?') ? '&' : '?'}heartbeat=5`)
    try {
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      await channel.assertQueue(this.queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
      await channel.bindQueue(this.queue, this.exchange, '#')
      await channel.prefetch(500)
      await channel.consume(this.queue, (m) => m && this.record(channel, m), { noAck: false })
      this.connection = connection
      this.channel = channel
    } catch (error) {
      await connection.close().catch(() => undefined)
      throw error
    }
    connection.on('error', () => undefined)
    connection.on('close', () => void this.reconnect())
  }

  private record(channel: Channel, m: ConsumeMessage): void {
    const id = m.properties.messageId as string | undefined
    if (id && !(m.fields.redelivered && this.counts.has(id)))
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1)
    channel.ack(m)
  }

  private async reconnect(): Promise<void> {
    this.connection = undefined
    this.channel = undefined
    if (this.closed) return
    this.reconnects += 1
    await eventually('the tap reconnected to a node', () => this.connect().then(() => true), {
      timeoutMs: 10 * 60_000,
      intervalMs: 1_000,
    }).catch((error: unknown) => {
      process.stderr.write(`[cluster] tap: ${String(error)}\n`)
    })
  }

  /** Deletes the queue and closes the connection (the queue stays if no node answers). */
  async delete(): Promise<void> {
    this.closed = true
    await this.channel?.deleteQueue(this.queue).catch(() => undefined)
    await this.connection?.close().catch(() => undefined)
  }
}
