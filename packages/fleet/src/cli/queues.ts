import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import { reactionsOf } from '@saga/contracts'
import { SERVICES, type CliSettings } from './settings.js'

const exec = promisify(execFile)

async function brokerQueueNames(settings: CliSettings): Promise<string[] | undefined> {
  if (settings.managementUrl) {
    try {
      const url = new URL('/api/queues?columns=name', settings.managementUrl)
      const auth = Buffer.from(
        `${decodeURIComponent(url.username || 'guest')}:${decodeURIComponent(url.password || 'guest')}`,
      )
      url.username = ''
      url.password = ''
      const res = await fetch(url, { headers: { authorization: `Basic ${auth.toString('base64')}` } })
      if (res.ok) return ((await res.json()) as { name: string }[]).map((q) => q.name)
    } catch {
      // fall through
    }
  }
  try {
    const { stdout } = await exec('rabbitmqctl', ['list_queues', 'name', '--no-table-headers', '-q'], {
      timeout: 15_000,
    })
    return stdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
  } catch {
    return undefined
  }
}

/** The queues among `names` that exist on the broker (a probe of a missing queue closes its channel). */
async function existingQueues(connection: amqp.ChannelModel, names: string[]): Promise<string[]> {
  const existing: string[] = []
  for (const queue of names) {
    // checkQueue on a missing queue closes the channel with 404, so one channel per probe.
    const channel = await connection.createChannel()
    channel.on('error', () => undefined)
    try {
      await channel.checkQueue(queue)
      existing.push(queue)
      await channel.close()
    } catch {
      // not declared (yet)
    }
  }
  return existing
}

/**
 * The dead-letter queues of the fleet's handlers (`<prefix>.<handler>.dlq`) that exist on the broker.
 * Probes the known handlers' DLQs first (a few ms); only when one of them is missing (a renamed or
 * not yet started handler) does it list the broker's queues, which through rabbitmqctl takes seconds.
 */
export async function deadLetterQueues(
  settings: CliSettings,
  connection: amqp.ChannelModel,
): Promise<string[]> {
  // A batch recorder's facts share one handler name, hence one queue: count it once.
  const known = [
    ...new Set(
      SERVICES.flatMap((s) =>
        reactionsOf(s).map((r) => `${settings.services[s].queuePrefix}.${r.handler}.dlq`),
      ),
    ),
  ]
  const found = await existingQueues(connection, known)
  if (found.length === known.length) return found.sort()
  const prefixes = SERVICES.map((s) => `${settings.services[s].queuePrefix}.`)
  const listed = await brokerQueueNames(settings)
  if (!listed) return found.sort()
  const candidates = listed.filter(
    (q) => q.endsWith('.dlq') && prefixes.some((p) => q.startsWith(p)) && !found.includes(q),
  )
  return [...found, ...(await existingQueues(connection, candidates))].sort()
}

/** A dead-lettered message as listed. */
export interface DeadLetter {
  queue: string
  messageId: string | undefined
  type: string | undefined
  correlationId: string | undefined
  reason: string | undefined
  handler: string | undefined
  deadLetteredAt: string | undefined
  routingKey: string | undefined
}

const header = (msg: amqp.GetMessage, name: string): string | undefined => {
  const headers: unknown = msg.properties.headers
  const value = (headers as Record<string, unknown> | undefined)?.[name]
  if (value === undefined || value === null) return undefined
  if (typeof value === 'string') return value
  if (Buffer.isBuffer(value)) return value.toString('utf8')
  return JSON.stringify(value)
}

function describe(queue: string, msg: amqp.GetMessage): DeadLetter {
  return {
    queue,
    messageId: msg.properties.messageId as string | undefined,
    type: msg.properties.type as string | undefined,
    correlationId: msg.properties.correlationId as string | undefined,
    reason: header(msg, 'x-dead-letter-reason') ?? header(msg, 'x-first-death-reason'),
    handler: header(msg, 'x-dead-letter-handler'),
    deadLetteredAt: header(msg, 'x-dead-lettered-at'),
    routingKey: header(msg, 'x-original-routing-key'),
  }
}

/**
 * Reads the messages of `queue` without removing them: gets them unacknowledged on one channel,
 * then closes the channel, which returns them all to the queue. `onMessage` may ack a message
 * (through the channel it is given) to remove it instead. Reads at most the number of messages
 * the queue held when it started (and `limit`): a message that comes back into the queue meanwhile
 * (a requeued poison message dead-lettered again) is left for the next run, never looped on.
 */
export async function browse(
  connection: amqp.ChannelModel,
  queue: string,
  onMessage: (msg: amqp.GetMessage, channel: amqp.Channel) => Promise<void> | void,
  limit = 10_000,
): Promise<number> {
  const channel = await connection.createChannel()
  channel.on('error', () => undefined)
  let n = 0
  try {
    const { messageCount } = await channel.checkQueue(queue)
    for (; n < Math.min(limit, messageCount); n++) {
      const msg = await channel.get(queue, { noAck: false })
      if (!msg) break
      await onMessage(msg, channel)
    }
  } finally {
    await channel.close().catch(() => undefined)
  }
  return n
}

/** Browses the fleet's dead-letter queues one after another; `onMessage` as for `browse`, told the queue. */
async function browseDeadLetters(
  settings: CliSettings,
  connection: amqp.ChannelModel,
  onMessage: (queue: string, msg: amqp.GetMessage, channel: amqp.Channel) => Promise<void> | void,
): Promise<void> {
  for (const queue of await deadLetterQueues(settings, connection)) {
    await browse(connection, queue, (msg, channel) => onMessage(queue, msg, channel))
  }
}

/** Lists the dead-lettered messages of the fleet, optionally only those of one order. */
export async function listDeadLetters(
  settings: CliSettings,
  connection: amqp.ChannelModel,
  correlationId?: string,
): Promise<DeadLetter[]> {
  const found: DeadLetter[] = []
  await browseDeadLetters(settings, connection, (queue, msg) => {
    const d = describe(queue, msg)
    if (!correlationId || d.correlationId === correlationId) found.push(d)
  })
  return found
}

/** Headers the broker or the consumer added on the way to the DLQ; a requeued copy starts clean. */
const DEAD_LETTER_HEADERS =
  /^x-(dead-letter|death|first-death|last-death|original-|delivery-count|retry|attempt)/

/**
 * Moves dead-lettered messages back to their handler's queue (the DLQ name without `.dlq`),
 * through the default exchange so only that handler sees it again (a handler that already has the
 * message in its inbox skips it). `match` selects by message id, or every message when undefined.
 * Each copy is confirmed by the broker before its DLQ copy is acked. Returns what was moved.
 */
export async function requeueDeadLetters(
  settings: CliSettings,
  connection: amqp.ChannelModel,
  match: string | undefined,
): Promise<DeadLetter[]> {
  const moved: DeadLetter[] = []
  const confirm = await connection.createConfirmChannel()
  try {
    await browseDeadLetters(settings, connection, async (queue, msg, channel) => {
      if (match !== undefined && msg.properties.messageId !== match) return
      const headers = Object.fromEntries(
        Object.entries((msg.properties.headers ?? {}) as Record<string, unknown>).filter(
          ([k]) => !DEAD_LETTER_HEADERS.test(k),
        ),
      )
      confirm.sendToQueue(queue.replace(/\.dlq$/, ''), msg.content, {
        ...(msg.properties as amqp.Options.Publish),
        headers,
        persistent: true,
      })
      await confirm.waitForConfirms()
      channel.ack(msg)
      moved.push(describe(queue, msg))
    })
  } finally {
    await confirm.close().catch(() => undefined)
  }
  return moved
}

/**
 * Removes the dead-lettered message with id `messageId` from its DLQ, every copy of it (the rest stay).
 * `onFound` is called with each copy before it is acked (so it is printed before it is gone).
 * Returns what was removed; empty when no DLQ holds the id.
 */
export async function discardDeadLetter(
  settings: CliSettings,
  connection: amqp.ChannelModel,
  messageId: string,
  onFound: (d: DeadLetter) => void = () => undefined,
): Promise<DeadLetter[]> {
  const removed: DeadLetter[] = []
  await browseDeadLetters(settings, connection, (queue, msg, channel) => {
    if (msg.properties.messageId !== messageId) return
    const d = describe(queue, msg)
    onFound(d)
    channel.ack(msg)
    removed.push(d)
  })
  return removed
}
