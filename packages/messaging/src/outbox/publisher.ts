import type { ConfirmChannel, Message } from 'amqplib'
import type { Publishable } from './envelope.js'

/** Why one message of a batch was not published. */
export interface PublishFailure {
  id: string
  error: string
  /**
   * `message`: this message's own fault (returned as unroutable, nacked, refused by the client);
   * retried with backoff and parked after the attempts run out.
   * `transport`: the batch as a whole failed (confirm timeout, channel or connection closed);
   * retried as soon as the link works again, never parked for it.
   * `rejected`: nacked by the broker. RabbitMQ nacks for a queue's state, never for a message's
   * content (an overflowing queue with `reject-publish`, a quorum queue without a leader:
   * https://www.rabbitmq.com/docs/confirms#server-sent-nacks), so it is retried after a short
   * backoff (at most 5 s), never parked, and the channel is replaced: a quorum queue's
   * `reject-publish` state sticks to the channel that saw it (RabbitMQ 3.10: the same channel was
   * nacked for minutes after the limit was lifted while a fresh one was acked).
   */
  kind: 'message' | 'transport' | 'rejected'
}

/** Outcome of one batch: confirmed ids and failures; together they cover every message. */
export interface BatchOutcome {
  published: string[]
  failed: PublishFailure[]
  /** The channel can no longer be used (closed, a confirm timed out, or nacked): open a new one. */
  channelBroken: boolean
}

/**
 * Publishes a batch on a confirm channel and awaits the broker's confirms for the whole batch at
 * once (not one message at a time), for at most `timeoutMs` ms.
 *
 * A message published with `mandatory` that no queue takes comes back as `basic.return` and is
 * then confirmed (acked) by the broker all the same
 * (https://www.rabbitmq.com/docs/confirms#when-publishes-are-confirmed): it counts as failed. The
 * broker sends the return before the ack on the same channel, so the return is known by the time
 * the confirm callback runs.
 *
 * A timeout or a closed channel leaves every unconfirmed message unpublished (it may still have
 * reached the broker: delivery is at least once). Never rejects.
 */
export async function publishBatch(
  channel: ConfirmChannel,
  exchange: string,
  batch: { id: string; message: Publishable }[],
  timeoutMs: number,
): Promise<BatchOutcome> {
  const returned = new Map<string, string>()
  const outcome = new Map<string, PublishFailure | 'ok'>()
  let settle: () => void = () => undefined
  const allSettled = new Promise<void>((resolve) => (settle = resolve))
  const record = (id: string, result: PublishFailure | 'ok'): void => {
    if (outcome.has(id)) return
    outcome.set(id, result)
    if (outcome.size === batch.length) settle()
  }

  const onReturn = (message: Message): void => {
    const id = message.properties.messageId as string | undefined
    // basic.return fields: https://www.rabbitmq.com/amqp-0-9-1-reference#basic.return
    const fields = message.fields as typeof message.fields & { replyCode?: number; replyText?: string }
    if (id) {
      returned.set(
        id,
        `returned by the broker as ${fields.replyCode ?? '?'} ${fields.replyText ?? 'unroutable'} (exchange ${exchange}, routing key ${fields.routingKey})`,
      )
    }
  }
  let closeReason = ''
  let nacked = false
  const onClose = (): void => {
    closeReason ||= 'channel closed before confirming'
    settle()
  }
  const onError = (error: Error): void => {
    closeReason = `channel closed: ${error.message}`
  }
  channel.on('return', onReturn)
  channel.on('close', onClose)
  channel.on('error', onError)
  const timer = setTimeout(settle, timeoutMs)
  try {
    for (const { id, message } of batch) {
      try {
        // publish() returning false only means the socket buffer is full; the batch is bounded,
        // so it is not awaited (the confirms are).
        channel.publish(exchange, message.routingKey, message.content, message.options, (error: unknown) => {
          if (error) {
            // A channel that closes calls back every pending publish with an error: that is the
            // transport's failure, not this message's.
            const transport = closeReason !== '' || /closed/i.test((error as Error).message ?? '')
            if (!transport) nacked = true
            record(id, {
              id,
              error: transport ? closeReason || 'channel closed' : 'nacked by the broker',
              kind: transport ? 'transport' : 'rejected',
            })
            return
          }
          const why = returned.get(id)
          record(id, why ? { id, error: why, kind: 'message' } : 'ok')
        })
      } catch (error) {
        // Thrown synchronously: a closed channel (IllegalOperationError) or a message amqplib
        // cannot encode (e.g. headers over 64 KiB).
        const closed = /closed/i.test((error as Error).message)
        record(id, {
          id,
          error: `publish failed: ${(error as Error).message}`,
          kind: closed ? 'transport' : 'message',
        })
      }
    }
    await allSettled
  } finally {
    clearTimeout(timer)
    channel.off('return', onReturn)
    channel.off('close', onClose)
    channel.off('error', onError)
  }

  const timedOut = outcome.size < batch.length && closeReason === ''
  const published: string[] = []
  const failed: PublishFailure[] = []
  for (const { id } of batch) {
    const result = outcome.get(id)
    if (result === 'ok') published.push(id)
    else if (result) failed.push(result)
    else
      failed.push({
        id,
        error: timedOut ? `broker confirm timed out after ${timeoutMs} ms` : closeReason,
        kind: 'transport',
      })
  }
  return { published, failed, channelBroken: closeReason !== '' || timedOut || nacked }
}
