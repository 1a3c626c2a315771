import type { Channel, ChannelModel, ConfirmChannel, GetMessage, Options } from 'amqplib'

/** A dead-lettered message as the admin surface shows it (from its properties, headers and CloudEvent body). */
export interface DeadLetter {
  messageId: string | null
  type: string | null
  /** The key it was published with (`x-original-routing-key`). */
  routingKey: string | null
  correlationId: string | null
  causationId: string | null
  /** The CloudEvent's `subject` (the outbox row's aggregate id), else the payload's `orderId`. */
  aggregateId: string | null
  /** Why it was dead-lettered: the validation problem, the last handler error, or the broker's reason. */
  reason: string | null
  handler: string | null
  /** ISO 8601, when the consumer dead-lettered it; null when the broker did (delivery limit). */
  deadLetteredAt: string | null
  /** The CloudEvent's `data`, or the body as text when it is not a CloudEvent. */
  payload: unknown
}

const text = (value: unknown): string | null => {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return JSON.stringify(value)
}

type Body = { data?: unknown; subject?: unknown; causationid?: unknown } | undefined

function parseBody(content: Buffer): { body: Body; raw: string } {
  const raw = content.toString('utf8')
  try {
    const parsed = JSON.parse(raw) as Body | null
    return { body: parsed && typeof parsed === 'object' ? parsed : undefined, raw }
  } catch {
    return { body: undefined, raw }
  }
}

/** Describes one message got from a dead-letter queue. */
export function describeDeadLetter(message: GetMessage): DeadLetter {
  const { properties } = message
  const headers = (properties.headers ?? {}) as Record<string, unknown>
  const { body, raw } = parseBody(message.content)
  const data = body && 'data' in body ? body.data : undefined
  const orderId = data && typeof data === 'object' ? (data as { orderId?: unknown }).orderId : undefined
  return {
    messageId: text(properties.messageId),
    type: text(properties.type),
    routingKey: text(headers['x-original-routing-key']),
    correlationId: text(properties.correlationId),
    causationId: text(headers['causation-id'] ?? body?.causationid),
    aggregateId: text(body?.subject ?? orderId),
    reason: text(headers['x-dead-letter-reason'] ?? headers['x-first-death-reason']),
    handler: text(headers['x-dead-letter-handler']),
    deadLetteredAt: text(headers['x-dead-lettered-at']),
    payload: body ? data : raw,
  }
}

/** Whether `letter` belongs to aggregate `id`: its subject/payload id or its correlation id. */
export const concernsAggregate = (letter: DeadLetter, id: string): boolean =>
  letter.aggregateId === id || letter.correlationId === id

/** Longest a browse waits for the messages it returned to be ready in the queue again, ms. */
const RETURN_WAIT_MS = 2_000

/**
 * Reads the messages of `queue` without removing them: gets them unacknowledged on one channel (at
 * most `limit`; each once, since a held message is not delivered again), calls `onMessage` with
 * each (it may ack one on the channel it is given, to remove it, and then returns true), then nacks
 * the rest back into the queue and closes the channel. A quorum queue makes returned messages ready
 * again asynchronously, so it waits (at most 2 s) until the queue counts them again: the next
 * browse sees them. `enough`, when given, ends the browse early once it returns true (a caller that
 * has what it came for). Returns the queue's message count when it started.
 */
export async function browseQueue(
  connection: ChannelModel,
  queue: string,
  limit: number,
  onMessage: (message: GetMessage, channel: Channel) => Promise<boolean> | boolean,
  enough: () => boolean = () => false,
): Promise<number> {
  const channel = await connection.createChannel()
  channel.on('error', () => undefined)
  let held = 0
  try {
    const { messageCount } = await channel.checkQueue(queue)
    for (let n = 0; n < limit && !enough(); n++) {
      const message = await channel.get(queue, { noAck: false })
      if (!message) break
      if (!(await onMessage(message, channel))) held++
    }
    if (held > 0) channel.nackAll(true)
    const deadline = Date.now() + RETURN_WAIT_MS
    while (held > 0 && Date.now() < deadline && (await channel.checkQueue(queue)).messageCount < held)
      await new Promise((resolve) => setTimeout(resolve, 10))
    return messageCount
  } finally {
    await channel.close().catch(() => undefined)
  }
}

/** Headers the broker or the consumer added on the way to the DLQ; a requeued copy starts without them. */
const DEAD_LETTER_HEADERS = /^x-(dead-letter|death|first-death|last-death|original-|delivery-count)/

/**
 * Publishes a copy of dead letter `message` to `queue` through the default exchange (so only that
 * handler sees it again) with the same body, message id and properties, and the headers it was
 * published with (the dead-letter ones removed), and waits for the broker's confirm. Only then may
 * the caller ack the dead letter: a copy the broker did not take must not lose the original.
 * A handler that already has the message id in its inbox skips the copy.
 * @throws the channel's error when the broker does not confirm
 */
export async function republish(channel: ConfirmChannel, queue: string, message: GetMessage): Promise<void> {
  const headers = Object.fromEntries(
    Object.entries((message.properties.headers ?? {}) as Record<string, unknown>).filter(
      ([name]) => !DEAD_LETTER_HEADERS.test(name),
    ),
  )
  const options: Options.Publish = {
    contentType: message.properties.contentType as string | undefined,
    contentEncoding: message.properties.contentEncoding as string | undefined,
    messageId: message.properties.messageId as string | undefined,
    correlationId: message.properties.correlationId as string | undefined,
    type: message.properties.type as string | undefined,
    appId: message.properties.appId as string | undefined,
    timestamp: message.properties.timestamp as number | undefined,
    headers,
    persistent: true,
  }
  channel.sendToQueue(queue, message.content, options)
  await channel.waitForConfirms()
}
