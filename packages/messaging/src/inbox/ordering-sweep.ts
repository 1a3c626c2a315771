import type { ConsumeMessage } from 'amqplib'
import type { ChannelSession } from '../amqp/queue-channel.js'
import type { ConsumedMessage, Database, HandlerDefinition, Logger, TransactionClient } from '../types.js'
import type { HandlerCounters } from './handle-delivery.js'
import { orderingReport, putBackReady, type OrderingReport, type OrderingSettings } from './ordering.js'

/** What an ordered handler's sweep needs. */
export interface SweepOptions<Tx extends TransactionClient> {
  database: Database<Tx>
  handler: HandlerDefinition<Tx>
  logger: Logger
  /** Where it counts put-backs and sets the blocked, waiting and gap gauges. */
  counters: HandlerCounters
  settings: OrderingSettings
  /** The channel to put held deliveries back on, while the queue is consumed. */
  session(): ChannelSession | undefined
}

/** A periodic sweep of one ordered handler: `start` (idempotent) and `stop`. */
export interface Sweep {
  start(): void
  stop(): void
}

/**
 * The sweep of one ordered handler, every `settings.sweepMs`: puts back every held delivery whose
 * predecessor is handled (what a crash between a commit and its put-back left, or a key an
 * operator skipped), then reads the handler's report into the gauges and logs the gaps at `warn`
 * whenever their count changes. A failed round is logged and the next one tries again.
 */
export function createSweep<Tx extends TransactionClient>(options: SweepOptions<Tx>): Sweep {
  const { database, logger, counters, settings } = options
  const handler = options.handler.name
  let timer: NodeJS.Timeout | undefined
  let running = false
  let lastGaps = 0

  const report = (found: OrderingReport): void => {
    counters.orderBlocked = found.blocked
    counters.orderWaiting = found.waiting
    counters.orderGaps = found.gaps
    if (found.gaps !== lastGaps && found.gaps > 0)
      logger.warn(
        { handler, gaps: found.gaps, oldest: found.sample },
        `ordered messages wait more than ${settings.gapAfterMs} ms for a predecessor that has not come; skip it if it never will`,
      )
    lastGaps = found.gaps
  }

  const round = async (): Promise<void> => {
    const session = options.session()
    if (session) {
      const put = (d: ConsumeMessage, h: Record<string, unknown>): Promise<void> => session.putBack(d, h)
      counters.orderPutBackTotal += await putBackReady(database, handler, settings, put)
    }
    report(await orderingReport(database, handler, settings))
  }

  const tick = (): void => {
    timer = setTimeout(() => {
      running = true
      round()
        .catch((error: unknown) =>
          logger.warn({ err: error, handler }, 'ordering sweep failed; trying again'),
        )
        .finally(() => {
          running = false
          if (timer) tick()
        })
    }, settings.sweepMs)
    timer.unref()
  }

  return {
    start() {
      if (!timer && !running) tick()
    },
    stop() {
      clearTimeout(timer)
      timer = undefined
    },
  }
}

/** What ordered deliveries on one channel use (`DeliveryRuntime.ordering`). */
export interface OrderedRuntime {
  /** Puts the held successors of a handled message back into the queue. Never throws. */
  release(message: ConsumedMessage): void
  /**
   * Waits for this process's earlier transaction of the same key to end, in the order the calls
   * came; resolves with the function that ends this one's turn.
   */
  turn(message: ConsumedMessage): Promise<() => void>
}

/** What an ordered handler queue adds: its sweep, and the ordered runtime of a channel. */
export interface OrderedParts {
  sweep: Sweep
  /** The `DeliveryRuntime.ordering` of deliveries on `session`. */
  on(session: ChannelSession): OrderedRuntime
}

/**
 * Turns per key within one process: deliveries of one key that came one after another take their
 * transactions in that order, instead of racing for the key's cursor row (where the later one,
 * locking first, would be held and put back). Across processes the cursor's lock still decides.
 */
function keyTurns(): OrderedRuntime['turn'] {
  const tails = new Map<string, Promise<void>>()
  return async (message) => {
    const key = `${message.source}\u0000${message.ordering?.key ?? ''}`
    const before = tails.get(key)
    let end = (): void => undefined
    const mine = new Promise<void>((resolve) => (end = resolve))
    tails.set(key, mine)
    await before
    return () => {
      end()
      if (tails.get(key) === mine) tails.delete(key)
    }
  }
}

/**
 * The sweep and the release of one ordered handler queue. `release` puts back the held successor
 * of a handled message at once, on the channel it came on; a failure is logged, and the sweep
 * puts it back later. Never throws.
 */
export function createOrderedParts<Tx extends TransactionClient>(options: SweepOptions<Tx>): OrderedParts {
  const { database, logger, counters, settings } = options
  const handler = options.handler.name
  const release = async (session: ChannelSession, message: ConsumedMessage): Promise<void> => {
    const only = { producer: message.source, key: message.ordering?.key ?? '' }
    try {
      const put = (d: ConsumeMessage, h: Record<string, unknown>): Promise<void> => session.putBack(d, h)
      counters.orderPutBackTotal += await putBackReady(database, handler, settings, put, only)
    } catch (error) {
      logger.warn({ err: error, handler, ...only }, 'putting a held message back failed; the sweep will')
    }
  }
  const turn = keyTurns()
  return {
    sweep: createSweep(options),
    on: (session) => ({ release: (message) => void release(session, message), turn }),
  }
}
