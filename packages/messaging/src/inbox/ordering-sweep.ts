import type { ChannelSession } from '../amqp/queue-channel.js'
import { queryRows } from '../database.js'
import { READY_KEYS, START_SETTLED } from '../sql.js'
import type { ConsumedMessage, Database, HandlerDefinition, Logger, TransactionClient } from '../types.js'
import type { DeliveryRuntime, HandlerCounters } from './handle-delivery.js'
import { drainKey, type DrainContext } from './ordering-drain.js'
import {
  keyId,
  orderingReport,
  type OrderingReport,
  type OrderingSettings,
  type PutBack,
} from './ordering.js'

/** What an ordered handler's sweep needs. */
export interface SweepOptions<Tx extends TransactionClient> {
  database: Database<Tx>
  handler: HandlerDefinition<Tx>
  logger: Logger
  /** Where it counts started keys and sets the blocked, waiting and gap gauges. */
  counters: HandlerCounters
  settings: OrderingSettings
  /** Drains one ready key (`drainKey` on the queue's current channel). Never throws. */
  drain(producer: string, key: string): Promise<void>
}

/** A periodic sweep of one ordered handler: `start` (idempotent) and `stop`. */
export interface Sweep {
  start(): void
  stop(): void
}

/**
 * The sweep of one ordered handler, every `settings.sweepMs`: starts the keys that settled longer
 * than `startSettleMs` (`START_SETTLED`, each logged at `info` and counted), drains every key whose
 * next delivery is held (those, what a crash between a commit and its drain left, or a key an
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

  const start = async (): Promise<void> => {
    const started = await database.transaction((tx) =>
      queryRows<{ producer: string; key: string; seq: string }>(tx, START_SETTLED, [
        handler,
        settings.startSettleMs,
      ]),
    )
    for (const { producer, key, seq } of started) {
      counters.orderSettledTotal += 1
      logger.info(
        { handler, producer, key, sequence: Number(seq) },
        'ordered key first seen above sequence 1: its order starts at its lowest held message',
      )
    }
  }

  const round = async (): Promise<void> => {
    await start()
    const params = [handler, settings.putBackAgainMs, 1000]
    const keys = await database.transaction((tx) =>
      queryRows<{ producer: string; key: string }>(tx, READY_KEYS, params),
    )
    // One key after another: each drain takes a transaction slot per held delivery.
    for (const { producer, key } of keys) await options.drain(producer, key)
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
  /** Handles the held successors of a handled message in this process (`drainKey`). Never throws. */
  release(message: ConsumedMessage): void
  /**
   * Waits for this process's earlier transaction of the same key to end, in the order the calls
   * came; resolves with the function that ends this one's turn.
   */
  turn(producer: string, key: string): Promise<() => void>
}

/** What an ordered handler queue adds: its sweep, and the ordered runtime of a channel. */
export interface OrderedParts {
  sweep: Sweep
  /** The `DeliveryRuntime.ordering` of deliveries on `session` with `runtime`. */
  on(session: ChannelSession, runtime: DeliveryRuntime<never>): OrderedRuntime
}

/**
 * Turns per key within one process: deliveries of one key that came one after another take their
 * transactions in that order, instead of racing for the key's cursor row (where the later one,
 * locking first, would be held). Across processes the cursor's lock decides.
 */
function keyTurns(): OrderedRuntime['turn'] {
  const tails = new Map<string, Promise<void>>()
  return async (producer, key) => {
    const id = keyId(producer, key)
    const before = tails.get(id)
    let end = (): void => undefined
    const mine = new Promise<void>((resolve) => (end = resolve))
    tails.set(id, mine)
    await before
    return () => {
      end()
      if (tails.get(id) === mine) tails.delete(id)
    }
  }
}

/**
 * The sweep and the ordered runtime of one ordered handler queue. `release` drains the key of a
 * handled message at once, on the channel it came on; the sweep drains every ready key on the
 * channel of the latest delivery while the queue is consumed.
 */
export function createOrderedParts<Tx extends TransactionClient>(
  options: Omit<SweepOptions<Tx>, 'drain'>,
): OrderedParts {
  const turn = keyTurns()
  let current: DrainContext<Tx> | undefined
  const drain = (producer: string, key: string): Promise<void> =>
    current && !current.runtime.stopping.aborted ? drainKey(current, producer, key) : Promise.resolve()
  return {
    sweep: createSweep({ ...options, drain }),
    on(session, runtime) {
      const putBack: PutBack = (delivery, headers) => session.putBack(delivery, headers)
      const context = { runtime: runtime as DeliveryRuntime<Tx>, putBack, settings: options.settings, turn }
      current = context
      return {
        release: (message) => void drainKey(context, message.source, message.ordering?.key ?? ''),
        turn,
      }
    },
  }
}
