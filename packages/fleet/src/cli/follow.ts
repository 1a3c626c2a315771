import amqp from 'amqplib'
import { TERMINAL, publisherOf, waitingFor } from './chain.js'
import { outboxRowsOfOrder } from './outbox.js'
import type { CliSettings } from './settings.js'

/** One step of an order's chain as printed. */
export interface Step {
  routingKey: string
  type: string
  service: string
  messageId: string
  /** When the fact happened (CloudEvents `time`, else when seen). */
  at: Date
  source: 'live' | 'outbox'
}

/**
 * A live subscription to the run's exchange: an exclusive, auto-delete, server-named queue bound to
 * every routing key, keeping only messages whose AMQP correlationId is the order id. Opened before
 * an order is placed so no early step is missed; messages that arrive before the id is known are
 * buffered and filtered when it is set.
 */
export class ChainWatcher {
  private orderId: string | undefined
  private buffer: Step[] = []
  private readonly buffered = new Map<string, string | undefined>()
  private onStep: ((s: Step) => void) | undefined

  private constructor(private readonly connection: amqp.ChannelModel) {}

  static async open(settings: CliSettings): Promise<ChainWatcher> {
    const connection = await amqp.connect(settings.amqpUrl)
    connection.on('error', () => undefined)
    const watcher = new ChainWatcher(connection)
    const channel = await connection.createChannel()
    // checkExchange, not assert: the tool must not create an exchange with a typo'd name.
    await channel.checkExchange(settings.exchange)
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true })
    await channel.bindQueue(queue, settings.exchange, '#')
    await channel.consume(queue, (msg) => msg && watcher.receive(msg), { noAck: true })
    return watcher
  }

  private receive(msg: amqp.ConsumeMessage): void {
    let time: Date = new Date()
    try {
      const body = JSON.parse(msg.content.toString('utf8')) as { time?: string }
      if (body.time) time = new Date(body.time)
    } catch {
      // a malformed body still counts as a step the order saw
    }
    const correlationId = msg.properties.correlationId as string | undefined
    const step: Step = {
      routingKey: msg.fields.routingKey,
      type: (msg.properties.type as string | undefined) ?? '?',
      service: (msg.properties.appId as string | undefined) ?? publisherOf(msg.fields.routingKey),
      messageId: (msg.properties.messageId as string | undefined) ?? '?',
      at: time,
      source: 'live',
    }
    if (this.orderId === undefined) {
      this.buffer.push(step)
      this.buffered.set(step.messageId, correlationId)
    } else if (correlationId === this.orderId) {
      this.onStep?.(step)
    }
  }

  /** Starts delivering steps of `orderId` (buffered ones first) to `onStep`. */
  follow(orderId: string, onStep: (s: Step) => void): void {
    this.orderId = orderId
    this.onStep = onStep
    for (const step of this.buffer) if (this.buffered.get(step.messageId) === orderId) onStep(step)
    this.buffer = []
    this.buffered.clear()
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined)
  }
}

/** Formats one step: `+   12 ms  payment.processed.v1        payment    <message id>`. */
export function formatStep(step: Step, placedAt: Date): string {
  const ms = Math.max(0, step.at.getTime() - placedAt.getTime())
  return `  +${String(ms).padStart(6)} ms  ${step.type.padEnd(30)} ${step.service.padEnd(10)} ${step.messageId}`
}

/**
 * Prints the steps of one order until its saga is complete (a terminal event was seen and every
 * compensation the chain expects after it, see `waitingFor`), or `timeoutMs` passed. History comes
 * from the four outbox tables; what happens next from `watcher`. Each message id is printed once.
 * Resolves with the terminal routing key, or undefined when none came in time.
 */
export async function printChain(
  settings: CliSettings,
  watcher: ChainWatcher,
  orderId: string,
  placedAt: Date | undefined,
  {
    timeoutMs,
    write = (line: string) => process.stdout.write(`${line}\n`),
  }: {
    timeoutMs: number
    write?: (line: string) => void
  },
): Promise<string | undefined> {
  const printed = new Set<string>()
  const facts: string[] = []
  let start = placedAt
  let terminal: string | undefined
  let settle: (() => void) | undefined
  const done = new Promise<void>((resolve) => (settle = resolve))
  const show = (step: Step): void => {
    if (printed.has(step.messageId)) return
    printed.add(step.messageId)
    facts.push(step.routingKey)
    start ??= step.at
    write(formatStep(step, start))
    if (TERMINAL.has(step.routingKey)) terminal = step.routingKey
    // A cancellation is final for the order, but the refund and release still follow it.
    if (terminal && waitingFor(facts).length === 0) settle?.()
  }
  // Live steps wait until the history is printed, so the output stays in chain order.
  const live: Step[] = []
  let historyDone = false
  watcher.follow(orderId, (s) => (historyDone ? show(s) : live.push(s)))
  const history = await outboxRowsOfOrder(settings, orderId)
  for (const u of history.unreachable) write(`  (history of ${u.service} unavailable: ${u.error})`)
  for (const row of history.rows) {
    if (row.state === 'published') {
      const { routingKey, type, service, id: messageId, occurredAt: at } = row
      show({ routingKey, type, service, messageId, at, source: 'outbox' })
    }
  }
  historyDone = true
  for (const s of live) show(s)
  const timer = setTimeout(() => settle?.(), timeoutMs)
  await done
  clearTimeout(timer)
  if (terminal) {
    for (const w of waitingFor(facts))
      write(`  (still waiting for ${w.oneOf.join(' or ')} from ${w.service})`)
  }
  return terminal
}
