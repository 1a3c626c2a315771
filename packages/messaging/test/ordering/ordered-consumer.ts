/**
 * An ordered consumer for the per-key order tests: a handler with `ordering: 'per-key'` that writes
 * one `effect` row per run, after a random delay, and throws at random (a transient failure: the
 * transaction rolls back and the delivery is retried). `consumer-process.ts` runs it as a child
 * process (to be SIGKILLed); the test runs another in its own process.
 */
import pg from 'pg'
import { createAmqpConnection, type AmqpConnection } from '../../src/amqp/connection.js'
import { createConsumer, type Consumer } from '../../src/inbox/consumer.js'
import { pgDatabase } from '../../src/database.js'
import type { HandlerDefinition } from '../../src/types.js'
import { happened, insertEffect, type Happened } from '../inbox-fixture.js'

/** Where the ordered consumer runs and how its handler misbehaves. */
export interface OrderedConsumerSettings {
  amqpUrl: string
  exchange: string
  prefix: string
  handler: string
  /** Longest random handler delay, ms. */
  maxDelayMs: number
  /** Chance that a run throws (a transient failure), 0..1. */
  failRate: number
  /** Messages whose `n` is this always throw (a poisoned key's message); absent: none. */
  poisonN?: number | undefined
  /** Connection name, to tell the instances apart. */
  name: string
  /** `consumer.ordering.startSettleMs`; absent: the default. */
  startSettleMs?: number | undefined
}

/** The ordered handler of `settings`. */
export function orderedHandler(
  settings: OrderedConsumerSettings,
): HandlerDefinition<pg.PoolClient, Happened> {
  return {
    name: settings.handler,
    message: { ...happened, ordering: 'per-key' },
    ordering: 'per-key',
    async handle(message, tx) {
      await insertEffect(tx, settings.handler, message)
      if (settings.maxDelayMs > 0)
        await new Promise((r) => setTimeout(r, Math.random() * settings.maxDelayMs))
      if (message.payload.n === settings.poisonN) throw new Error('poisoned message')
      if (Math.random() < settings.failRate) throw new Error('random transient failure')
    },
  }
}

/** Starts an ordered consumer on `pool`; the caller stops it (`consumer.stop()`, `connection.close()`). */
export function startOrderedConsumer(
  pool: pg.Pool,
  settings: OrderedConsumerSettings,
): { consumer: Consumer; connection: AmqpConnection } {
  const connection = createAmqpConnection({ url: settings.amqpUrl, name: settings.name })
  const consumer = createConsumer<pg.PoolClient>({
    connection,
    database: pgDatabase(pool),
    handlers: [orderedHandler(settings)],
    queuePrefix: settings.prefix,
    declare: { exchange: settings.exchange },
    retryBaseMs: 40,
    retryMaxMs: 200,
    maxAttempts: settings.poisonN === undefined ? 30 : 3,
    ordering: {
      sweepMs: 300,
      gapAfterMs: 2_000,
      putBackAgainMs: 3_000,
      ...(settings.startSettleMs === undefined ? {} : { startSettleMs: settings.startSettleMs }),
    },
  })
  consumer.start()
  connection.start()
  return { consumer, connection }
}
