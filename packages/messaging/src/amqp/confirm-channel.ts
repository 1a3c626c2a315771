import type { ConfirmChannel } from 'amqplib'
import type { AmqpConnection } from './connection.js'

/**
 * One confirm channel on a connection, opened when first asked for and dropped when it breaks:
 * what the relay's publish loop and its publish on commit each hold. A channel the broker closes
 * is forgotten at once, so the next `get()` opens a fresh one.
 */
export class ConfirmChannelSlot {
  #channel: ConfirmChannel | undefined

  /**
   * @param openTimeoutMs how long opening a channel may take, ms (the connection drops itself when
   *   the broker does not answer in time)
   * @param prepare runs on each new channel before it is handed out (the relay declares its
   *   exchange there); when it throws, the channel is closed and `get()` rejects with its error
   */
  constructor(
    private readonly connection: AmqpConnection,
    private readonly openTimeoutMs: number,
    private readonly prepare?: (channel: ConfirmChannel) => Promise<void>,
  ) {}

  /**
   * The open channel, or a new one.
   * @throws Error when the connection is not open, the channel does not open in time, or `prepare` fails
   */
  async get(): Promise<ConfirmChannel> {
    if (this.#channel) return this.#channel
    const opened = await this.connection.openChannel(true, this.openTimeoutMs)
    opened.on('close', () => {
      if (this.#channel === opened) this.#channel = undefined
    })
    if (this.prepare) {
      try {
        await this.prepare(opened)
      } catch (error) {
        opened.close().catch(() => undefined)
        throw error
      }
    }
    this.#channel = opened
    return opened
  }

  /**
   * Drops `channel` if it is still the one held (default: the held one). Closing is not awaited: on a
   * silent broker it would wait for a close-ok that never comes.
   */
  discard(channel: ConfirmChannel | undefined = this.#channel): void {
    if (channel === undefined || channel !== this.#channel) return
    this.#channel = undefined
    channel.close().catch(() => undefined)
  }

  /** Closes the held channel and waits for the broker's close-ok; a failure to close is ignored. */
  async close(): Promise<void> {
    const channel = this.#channel
    this.#channel = undefined
    await channel?.close().catch(() => undefined)
  }
}
