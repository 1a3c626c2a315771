/**
 * Benchmark of the consumer draining a backlog, with batched inbox commits off and on (lever 5 of
 * docs/performance.md). Each round puts a backlog in one handler queue, then starts a consumer
 * (pgDatabase, 4 transaction slots, prefetch 40) and times it until every message is handled. The
 * handler does what a service's does: the inbox INSERT (the consumer's), one business INSERT, one
 * `enqueue`. Three cases (BENCH_CASES, comma-separated, default `fast,slow,medium`), each with the
 * variants `off` (batchMax 1: one transaction per delivery), `max 20 no budget` (batchMax 20,
 * batchBudgetMs Infinity: batches sized by batchMax alone) and `max 20 (default)` (batchMax 20,
 * batchBudgetMs 20), all at prefetch 40 so only the batching differs:
 * - `fast`: BENCH_BACKLOG messages (default 5,000) and nothing else in the handler; also `max 5`
 *   (the services' batch size at a prefetch of 10).
 * - `slow`: BENCH_SLOW_BACKLOG messages (default 40) whose handler also waits 150 ms (a call to
 *   another system, say): longer than the budget.
 * - `medium`: BENCH_MEDIUM_BACKLOG messages (default 400) whose handler waits 5 ms: four fit in
 *   the budget.
 * - `ordered`: BENCH_ORDERED_BACKLOG sequenced messages (default 3,000), 20 per key, the keys
 *   interleaved; variants `off` (batchMax 1), `off, batched` (batchMax 20), `per-key` (the
 *   handler with `ordering: 'per-key'`, batchMax 1) and `per-key, batched` (batchMax 20): what
 *   per-key order costs per message.
 * - `poison`: the same backlog, `per-key` against `per-key poisoned` (one key's message 2 always
 *   throws, 3 attempts, then dead-lettered: its key blocks), and the same batched; timed until
 *   every message of the other keys (and the poisoned key's first) is handled: what one blocked
 *   key costs the others.
 * Rounds interleave the variants of a case (off, 5, 20, off, 5, 20, ...), so each sees the same
 * machine. Per round it prints messages/s, this process's CPU per message
 * (process.cpuUsage: the consumer, amqplib, pg and the handler) and the PostgreSQL backends' CPU
 * per message (/proc of the pool's backends, where readable), and transactions committed; then the
 * median and range per variant.
 * Run: `npm run bench:consume -w @saga/messaging` (BENCH_BACKLOG, BENCH_ROUNDS rounds per variant,
 * default 3). Own database, exchange and queues, deleted after.
 */
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import amqp from 'amqplib'
import pg from 'pg'
import { AMQP_URL, createTestDatabase, deleteBrokerObjects, uniqueName } from '@saga/testkit'
import { createAmqpConnection } from '../src/amqp/connection.js'
import { pgDatabase } from '../src/database.js'
import { createConsumer } from '../src/inbox/consumer.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { toPublishable } from '../src/outbox/envelope.js'
import { createSignals } from '../src/signals.js'
import { deadLetterQueueName, declareTopology, queueName } from '../src/topology.js'
import type { Database, HandlerDefinition, MessageContract } from '../src/types.js'
import { fmt, until } from './measure.js'

const SQL = fileURLToPath(new URL('../sql/messaging.sql', import.meta.url))
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONCURRENCY = 4
const PREFETCH = 40
const TICKS_PER_SECOND = 100 // USER_HZ on Linux
const SLOW_HANDLER_MS = 150
const MEDIUM_HANDLER_MS = 5

interface Variant {
  name: string
  batchMax: number
  /** `batchBudgetMs`; undefined: the default. */
  budgetMs?: number
  /** The handler has `ordering: 'per-key'`. */
  ordered?: boolean
  /** The poisoned key's message 2 always throws (3 attempts, then dead-lettered: the key blocks). */
  poison?: boolean
}
interface Case {
  name: 'fast' | 'slow' | 'medium' | 'ordered' | 'poison'
  backlog: number
  /** Extra time each handler takes, ms. */
  extraMs: number
  variants: Variant[]
}
/** The variants of every case: batching off, batchMax alone (no budget), and the defaults. */
const VARIANTS: Variant[] = [
  { name: 'off', batchMax: 1 },
  { name: 'max 20 no budget', batchMax: 20, budgetMs: Number.POSITIVE_INFINITY },
  { name: 'max 20 (default)', batchMax: 20 },
]
const CASES: Case[] = [
  {
    name: 'fast',
    backlog: Number(process.env.BENCH_BACKLOG ?? 5_000),
    extraMs: 0,
    variants: [...VARIANTS, { name: 'max 5', batchMax: 5 }],
  },
  {
    name: 'slow',
    backlog: Number(process.env.BENCH_SLOW_BACKLOG ?? 40),
    extraMs: SLOW_HANDLER_MS,
    variants: VARIANTS,
  },
  {
    name: 'medium',
    backlog: Number(process.env.BENCH_MEDIUM_BACKLOG ?? 400),
    extraMs: MEDIUM_HANDLER_MS,
    variants: VARIANTS,
  },
]
// The ordered cases: BENCH_ORDERED_BACKLOG messages (default 3,000) of PER_KEY each per key, every
// message sequenced (partitionkey, sequence), the keys interleaved in the queue.
const PER_KEY = 20
const orderedBacklog = Number(process.env.BENCH_ORDERED_BACKLOG ?? 3_000)
CASES.push(
  {
    name: 'ordered',
    backlog: orderedBacklog,
    extraMs: 0,
    variants: [
      { name: 'off', batchMax: 1 },
      { name: 'off, batched', batchMax: 20 },
      { name: 'per-key', batchMax: 1, ordered: true },
      { name: 'per-key, batched', batchMax: 20, ordered: true },
    ],
  },
  {
    name: 'poison',
    backlog: orderedBacklog,
    extraMs: 0,
    variants: [
      { name: 'per-key', batchMax: 1, ordered: true },
      { name: 'per-key poisoned', batchMax: 1, ordered: true, poison: true },
      { name: 'per-key, batched', batchMax: 20, ordered: true },
      { name: 'per-key, batched poisoned', batchMax: 20, ordered: true, poison: true },
    ],
  },
)
const chosen = (process.env.BENCH_CASES ?? 'fast,slow,medium').split(',').map((name) => name.trim())
/** The case being run: the handler reads its extra time. */
let current: Case = CASES[0]!
/** Whether the round's handler refuses the poisoned key's message 2. */
let poisoned = false

interface Payload {
  n: number
  orderId: string
}
const contract: MessageContract<Payload> = {
  type: 'bench.happened.v1',
  routingKey: 'bench.happened',
  schema: {
    '~standard': {
      version: 1,
      vendor: 'bench',
      validate: (value) => ({ value: value as Payload }),
    },
  },
}

const ORDERING_SQL = fileURLToPath(new URL('../sql/ordering.sql', import.meta.url))
const db = await createTestDatabase({ prefix: 'bench_consume', sqlFiles: [SQL, ORDERING_SQL] })
const exchange = uniqueName('bench_consume_ex')
const prefix = uniqueName('bench_consume')
// Connections never idle out, so the backends measured are the ones that did the work.
const pool = new pg.Pool({ connectionString: db.url, max: CONCURRENCY + 2, idleTimeoutMillis: 0 })
pool.on('error', () => undefined)
await pool.query('CREATE TABLE effect (id uuid PRIMARY KEY, order_id uuid NOT NULL, n int NOT NULL)')

const handler: HandlerDefinition<pg.PoolClient, Payload> = {
  name: 'bench-handler',
  message: contract,
  async handle(message, tx) {
    if (poisoned && message.payload.orderId === POISONED_KEY && message.payload.n === 2)
      throw new Error('poisoned')
    if (current.extraMs > 0) await new Promise((resolve) => setTimeout(resolve, current.extraMs))
    await tx.query({
      name: 'bench.effect',
      text: 'INSERT INTO effect (id, order_id, n) VALUES ($1::uuid, $2::uuid, $3)',
      values: [randomUUID(), message.payload.orderId, message.payload.n],
    })
    await enqueue(tx, {
      type: 'bench.followed.v1',
      routingKey: 'bench.followed',
      payload: { orderId: message.payload.orderId, amount: 1999, currency: 'EUR' },
      aggregateId: message.payload.orderId,
      correlationId: message.correlationId,
      causationId: message.id,
    })
  },
}
const queue = queueName(prefix, handler.name)

/** The pool's backends, opened up front so every round is measured on the same connections. */
async function backendPids(): Promise<number[]> {
  const clients = await Promise.all(Array.from({ length: CONCURRENCY + 2 }, () => pool.connect()))
  const pids = await Promise.all(
    clients.map(
      async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid,
    ),
  )
  clients.forEach((client) => client.release())
  return pids
}
const pids = await backendPids()

/** CPU seconds of the pool's backends together, or NaN where /proc is not readable. */
async function backendCpuSeconds(): Promise<number> {
  let ticks = 0
  try {
    for (const pid of pids) {
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    }
  } catch {
    return Number.NaN
  }
  return ticks / TICKS_PER_SECOND
}

/** The key whose message 2 a poisoned variant's handler refuses. */
const POISONED_KEY = randomUUID()

/** Fills the queue with `backlog` valid deliveries (one saga each; `PER_KEY` sequenced ones per key when `ordered`), confirmed. */
async function fillQueue(backlog: number, ordered: boolean): Promise<void> {
  const connection = await amqp.connect(AMQP_URL)
  try {
    const channel = await connection.createConfirmChannel()
    await declareTopology(channel, { exchange, queuePrefix: prefix, handlers: [handler] })
    for (let n = 0; n < backlog; n += 500) {
      for (let i = n; i < Math.min(backlog, n + 500); i += 1) {
        // Ordered: key i % keys, its (i / keys + 1)th message; the poisoned key is key 0.
        const keys = backlog / PER_KEY
        const orderId = ordered ? (i % keys === 0 ? POISONED_KEY : keyIds[i % keys]!) : randomUUID()
        const sequence = ordered ? { orderingKey: orderId, sequence: Math.floor(i / keys) + 1 } : {}
        const message = toPublishable(
          {
            id: randomUUID(),
            type: contract.type,
            routing_key: contract.routingKey,
            payload: { n: ordered ? Math.floor(i / keys) + 1 : i, orderId },
            headers: { correlationId: orderId, ...sequence },
            aggregate_id: orderId,
            occurred_at: new Date(),
            attempts: 0,
          },
          'bench',
        )
        channel.publish(exchange, message.routingKey, message.content, message.options)
      }
      await channel.waitForConfirms()
    }
    await channel.close()
  } finally {
    await connection.close()
  }
}

interface Figures {
  /** From start to the last message handled. */
  seconds: number
  rate: number
  nodeUs: number
  pgUs: number
  transactions: number
}

/** Key ids of the ordered cases (fresh per round: each round starts every key at sequence 1). */
let keyIds: string[] = []

async function round({ batchMax, budgetMs, ordered = false, poison = false }: Variant): Promise<Figures> {
  const backlog = current.backlog
  await pool.query('TRUNCATE inbox_message, outbox_message, effect, ordering_cursor, ordering_waiting')
  keyIds = Array.from({ length: backlog / PER_KEY }, () => randomUUID())
  await fillQueue(backlog, ordered)
  // Poisoned: the key's message 1 is handled, 2 is dead-lettered, 3.. are held behind it.
  const expected = poison ? backlog - PER_KEY + 1 : backlog
  const inner = pgDatabase(pool)
  let transactions = 0
  const database: Database<pg.PoolClient> = {
    // Per-key order's slow paths and its sweep go through here.
    transaction: async (fn) => {
      const result = await inner.transaction(fn)
      transactions += 1
      return result
    },
    inboxTransaction: async (entry, fn) => {
      const outcome = await inner.inboxTransaction!(entry, fn)
      transactions += 1
      return outcome
    },
    inboxBatchTransaction: async (entries, fn) => {
      const result = await inner.inboxBatchTransaction!(entries, fn)
      transactions += 1
      return result
    },
    beginWith: async (first, expect, fn) => {
      const result = await inner.beginWith!(first, expect, fn)
      transactions += 1
      return result
    },
  }
  const signals = createSignals()
  let handled = 0
  let finished = 0
  signals.on('handled', () => {
    handled += 1
    if (handled === expected) finished = performance.now()
  })
  const connection = createAmqpConnection({ url: AMQP_URL, name: `${prefix}-consumer` })
  const consumer = createConsumer({
    connection,
    database,
    handlers: [{ ...handler, ...(ordered ? { ordering: 'per-key' } : {}) }],
    queuePrefix: prefix,
    signals,
    prefetch: PREFETCH,
    concurrency: CONCURRENCY,
    batchMax,
    batchBudgetMs: budgetMs,
    ...(poison ? { maxAttempts: 3, retryBaseMs: 50 } : {}),
  })
  poisoned = poison
  const cpu = process.cpuUsage()
  const pgBefore = await backendCpuSeconds()
  const started = performance.now()
  consumer.start()
  connection.start()
  await until(() => Promise.resolve(handled >= expected), 600_000, 'the backlog handled')
  const used = process.cpuUsage(cpu)
  const pgSeconds = (await backendCpuSeconds()) - pgBefore
  await consumer.stop()
  await connection.close()
  return {
    seconds: (finished - started) / 1_000,
    rate: expected / ((finished - started) / 1_000),
    nodeUs: (used.user + used.system) / expected,
    pgUs: (pgSeconds * 1e6) / expected,
    transactions,
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const us = (value: number): string => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(0)} µs`)
const show = (f: Figures): string =>
  `${f.seconds.toFixed(2).padStart(6)} s  ${fmt(f.rate).padStart(6)} msg/s  node ${us(f.nodeUs)}/msg  postgres ${us(f.pgUs)}/msg  ${f.transactions} transactions`

/** Runs the variants of `bench` interleaved, `ROUNDS` rounds, and prints each round and the medians. */
async function runCase(bench: Case): Promise<void> {
  current = bench
  console.log(
    `case ${bench.name}: backlog ${fmt(bench.backlog)}, handler +${bench.extraMs} ms, prefetch ${PREFETCH}, ${CONCURRENCY} transaction slots, ${ROUNDS} rounds per variant`,
  )
  await round(bench.variants[0]!) // warm-up: JIT, prepared statements, the queue's first declaration
  const results = new Map<string, Figures[]>(bench.variants.map((v) => [v.name, []]))
  for (let r = 1; r <= ROUNDS; r += 1) {
    for (const variant of bench.variants) {
      const figures = await round(variant)
      results.get(variant.name)!.push(figures)
      console.log(`${bench.name} round ${r} ${variant.name.padEnd(16)}  ${show(figures)}`)
    }
  }
  for (const [name, figures] of results) {
    const m = (key: keyof Figures) => median(figures.map((f) => f[key]))
    const range = (key: keyof Figures, unit: (v: number) => string) =>
      `${unit(Math.min(...figures.map((f) => f[key])))}-${unit(Math.max(...figures.map((f) => f[key])))}`
    console.log(
      `${bench.name} median ${name.padEnd(16)}  ${m('seconds').toFixed(2)} s (${range('seconds', (v) => v.toFixed(2))})  ${fmt(m('rate'))} msg/s (${range('rate', (v) => fmt(v))})  node ${us(m('nodeUs'))}/msg (${range('nodeUs', us)})  postgres ${us(m('pgUs'))}/msg (${range('pgUs', us)})  ${fmt(m('transactions'))} transactions`,
    )
  }
}

try {
  for (const bench of CASES) if (chosen.includes(bench.name)) await runCase(bench)
} finally {
  await pool.end()
  await deleteBrokerObjects({ exchanges: [exchange], queues: [queue, deadLetterQueueName(queue)] })
  await db.drop()
}
