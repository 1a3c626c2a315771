/**
 * Benchmark of one handler transaction on pg, the consumer's per-message database work without the
 * broker: the inbox INSERT, one business INSERT and one `enqueue`, committed. Compares
 * - `separate`: BEGIN, inbox INSERT, business INSERT, outbox INSERT, COMMIT, five round trips
 *   (what pgDatabase did before `inboxTransaction` and `deferToCommit`), and
 * - `combined`: `inInbox(pgDatabase(pool), ...)` (the consumer's path), three round trips (BEGIN with the inbox INSERT,
 *   the business INSERT, the outbox INSERT with COMMIT).
 * Rounds alternate the two (interleaved, so both see the same machine) and print, per transaction:
 * wall time, this process's CPU (process.cpuUsage) and the PostgreSQL backends' CPU (/proc, where
 * readable), each in µs, then the median per variant. One connection, transactions one at a time.
 * Run: `npx tsx bench/handler-transaction.ts` in packages/messaging (BENCH_TX, transactions per
 * round, default 2,000; BENCH_ROUNDS, rounds per variant, default 5). Own database, dropped after.
 */
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { createTestDatabase } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { inInbox, recordInbox } from '../src/inbox/inbox-record.js'
import { enqueue } from '../src/outbox/enqueue.js'
import type { OutgoingMessage } from '../src/types.js'

const SQL = fileURLToPath(new URL('../sql/messaging.sql', import.meta.url))
const TX = Number(process.env.BENCH_TX ?? 2_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const TICKS_PER_SECOND = 100 // USER_HZ on Linux

const db = await createTestDatabase({ prefix: 'bench_handler_tx', sqlFiles: [SQL] })
const pool = new pg.Pool({ connectionString: db.url, max: 1 })
pool.on('error', () => undefined)
await pool.query('CREATE TABLE effect (id uuid PRIMARY KEY, n int NOT NULL)')
const backend = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid

/** CPU seconds of the backend, or NaN where /proc is not readable. */
async function backendCpuSeconds(): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${backend}/stat`, 'utf8')).split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return Number.NaN
  }
}

const event = (n: number): OutgoingMessage => ({
  type: 'bench.happened.v1',
  routingKey: 'bench.happened',
  payload: { n, orderId: randomUUID(), lines: [{ sku: 'MUG-001', quantity: 2, unitPrice: 1250 }] },
  aggregateId: randomUUID(),
  correlationId: randomUUID(),
})

const business = (tx: pg.PoolClient, n: number) =>
  tx.query({
    name: 'bench.effect',
    text: 'INSERT INTO effect (id, n) VALUES ($1::uuid, $2)',
    values: [randomUUID(), n],
  })

async function separate(n: number): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    if (await recordInbox(client, randomUUID(), 'bench-handler')) {
      await business(client, n)
      await enqueue(client, event(n))
    }
    await client.query('COMMIT')
  } finally {
    client.release()
  }
}

const database = pgDatabase(pool)
async function combined(n: number): Promise<void> {
  await inInbox(database, { messageId: randomUUID(), handler: 'bench-handler' }, async (tx) => {
    await business(tx, n)
    await enqueue(tx, event(n))
  })
}

interface Figures {
  wallUs: number
  nodeUs: number
  pgUs: number
}

async function round(run: (n: number) => Promise<void>): Promise<Figures> {
  const cpu = process.cpuUsage()
  const pgBefore = await backendCpuSeconds()
  const started = performance.now()
  for (let n = 0; n < TX; n += 1) await run(n)
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  const pgSeconds = (await backendCpuSeconds()) - pgBefore
  return {
    wallUs: (wallMs * 1000) / TX,
    nodeUs: (used.user + used.system) / TX,
    pgUs: (pgSeconds * 1e6) / TX,
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const us = (value: number): string => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(0)} µs`)

try {
  await round(separate) // warm-up: prepared statements, JIT
  await round(combined)
  const results: Record<string, Figures[]> = { separate: [], combined: [] }
  for (let r = 1; r <= ROUNDS; r += 1) {
    for (const [name, run] of [
      ['separate', separate],
      ['combined', combined],
    ] as const) {
      const f = await round(run)
      results[name]!.push(f)
      console.log(
        `round ${r} ${name.padEnd(8)}  wall ${us(f.wallUs)}  node ${us(f.nodeUs)}  postgres ${us(f.pgUs)}`,
      )
    }
  }
  for (const [name, figures] of Object.entries(results)) {
    const m = (key: keyof Figures) => median(figures.map((f) => f[key]))
    const spread = (key: keyof Figures) =>
      `${us(Math.min(...figures.map((f) => f[key])))}-${us(Math.max(...figures.map((f) => f[key])))}`
    console.log(
      `median ${name.padEnd(8)}  wall ${us(m('wallUs'))} (${spread('wallUs')})  node ${us(m('nodeUs'))} (${spread('nodeUs')})  postgres ${us(m('pgUs'))} (${spread('pgUs')})`,
    )
  }
} finally {
  await pool.end()
  await db.drop()
}
