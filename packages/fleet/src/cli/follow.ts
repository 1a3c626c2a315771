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

/** Formats one step: `+   12 ms  payment.processed.v1        payment    <message id>`, ms since `origin`. */
export function formatStep(step: Step, origin: Date): string {
  const ms = Math.max(0, step.at.getTime() - origin.getTime())
  return `  +${String(ms).padStart(6)} ms  ${step.type.padEnd(30)} ${step.service.padEnd(10)} ${step.messageId}`
}

/**
 * Puts steps back in the order they happened. Steps arrive in the order the services' relays
 * published them, so two facts published moments apart by different services (a refund and a stock
 * release) can arrive the wrong way round; each step is held `holdMs` after it arrived, and released
 * together with every held step that happened before it, oldest first. A step arriving more than
 * `holdMs` late can still come after a later one: the hold bounds the wait, not the disorder.
 */
export class TimeOrder {
  private held: { step: Step; arrivedAt: number }[] = []

  constructor(private readonly holdMs: number) {}

  /** Holds `step`, which arrived at `arrivedAt` (ms since the epoch). */
  add(step: Step, arrivedAt: number): void {
    this.held.push({ step, arrivedAt })
  }

  /**
   * The steps to print at `now` (ms since the epoch), oldest first: those held at least `holdMs`, and
   * every held step that happened no later than the latest of them. Removes them from the hold.
   */
  due(now: number): Step[] {
    let until = -Infinity
    for (const h of this.held) {
      if (h.arrivedAt + this.holdMs <= now) until = Math.max(until, h.step.at.getTime())
    }
    return this.take((h) => h.step.at.getTime() <= until)
  }

  /** Every held step, oldest first; the hold is empty afterwards. */
  drain(): Step[] {
    return this.take(() => true)
  }

  private take(which: (h: { step: Step; arrivedAt: number }) => boolean): Step[] {
    const out = this.held.filter(which)
    this.held = this.held.filter((h) => !which(h))
    return out.map((h) => h.step).sort((a, b) => a.at.getTime() - b.at.getTime())
  }
}

/** How long a live step is held so that facts published moments apart print in their time order. */
export const HOLD_MS = 250

/**
 * Prints the steps of one order in the order they happened, until its saga is complete (a terminal
 * event was seen and every compensation the chain expects after it, see `waitingFor`), or
 * `timeoutMs` passed. History comes from the four outbox tables; what happens next from `watcher`,
 * each live step held up to `HOLD_MS` (see `TimeOrder`). Each message id is printed once. Offsets
 * are ms since `origin`, the order's `createdAt`, for history and live steps alike (so `place
 * --follow` and a later `follow` print the same offsets); without it, since the first step.
 * Resolves with the terminal routing key, or undefined when none came in time.
 */
export async function printChain(
  settings: CliSettings,
  watcher: ChainWatcher,
  orderId: string,
  origin: Date | undefined,
  {
    timeoutMs,
    write = (line: string) => process.stdout.write(`${line}\n`),
    holdMs = HOLD_MS,
  }: {
    timeoutMs: number
    write?: (line: string) => void
    holdMs?: number
  },
): Promise<string | undefined> {
  const received = new Set<string>()
  const facts: string[] = []
  const order = new TimeOrder(holdMs)
  let start = origin
  let terminal: string | undefined
  let settle: (() => void) | undefined
  const done = new Promise<void>((resolve) => (settle = resolve))
  const print = (steps: Step[]): void => {
    for (const step of steps) {
      start ??= step.at
      write(formatStep(step, start))
    }
  }
  // Live steps are held until the history is printed, and then `holdMs` each.
  let historyDone = false
  const receive = (step: Step, arrivedAt: number): void => {
    if (received.has(step.messageId)) return
    received.add(step.messageId)
    facts.push(step.routingKey)
    order.add(step, arrivedAt)
    if (TERMINAL.has(step.routingKey)) terminal = step.routingKey
    // A cancellation is final for the order, but the refund and release still follow it. Once
    // nothing more is expected, everything held is printed at once, in time order.
    if (historyDone && terminal && waitingFor(facts).length === 0) settle?.()
  }
  watcher.follow(orderId, (s) => receive(s, Date.now()))
  const history = await outboxRowsOfOrder(settings, orderId)
  for (const u of history.unreachable) write(`  (history of ${u.service} unavailable: ${u.error})`)
  for (const row of history.rows) {
    if (row.state === 'published') {
      const { routingKey, type, service, id: messageId, happenedAt: at } = row
      receive({ routingKey, type, service, messageId, at, source: 'outbox' }, -Infinity)
    }
  }
  historyDone = true
  print(order.due(Date.now()))
  if (terminal && waitingFor(facts).length === 0) settle?.()
  const tick = setInterval(() => print(order.due(Date.now())), Math.max(10, Math.floor(holdMs / 5)))
  const timer = setTimeout(() => settle?.(), timeoutMs)
  await done
  clearInterval(tick)
  clearTimeout(timer)
  print(order.drain())
  if (terminal) {
    for (const w of waitingFor(facts))
      write(`  (still waiting for ${w.oneOf.join(' or ')} from ${w.service})`)
  }
  return terminal
}

/**
 * What `place --follow` and `follow` print after the chain, and their exit code: `final status: X`
 * and 0 when a terminal event was seen; else 3 (2 is a usage error), saying the order is still PENDING after the timeout
 * (or, when the order service already reports a final status whose event was not seen, that status).
 * @param status the order's status from GET /orders/:id afterwards; undefined when it was not read
 */
export function outcome(
  orderId: string,
  status: string | undefined,
  reason: string | undefined,
  terminalSeen: boolean,
  timeoutMs: number,
): { lines: string[]; code: number } {
  const because = reason ? ` (${reason})` : ''
  if (terminalSeen) return { lines: [`final status: ${status ?? 'unknown'}${because}`], code: 0 }
  const hint = `run \`npm run order -- where ${orderId}\` to see what it waits for`
  if (status === 'PENDING')
    return {
      lines: [`order ${orderId} is still PENDING after the ${timeoutMs} ms timeout; ${hint}`],
      code: 3,
    }
  if (status === undefined) {
    return {
      lines: [
        `order ${orderId}: no final event within the ${timeoutMs} ms timeout, and its status could not be read; ${hint}`,
      ],
      code: 3,
    }
  }
  return {
    lines: [
      `order ${orderId} is ${status}${because}, but its final event was not seen within the ${timeoutMs} ms timeout; ${hint}`,
    ],
    code: 3,
  }
}
