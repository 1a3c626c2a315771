/**
 * Benchmark of the outbox relay on this machine (real PostgreSQL and RabbitMQ). Prints:
 * 1. relay throughput draining a 20,000-row backlog, 1 and 2 relays, against the naive relay and
 *    against plain amqplib publishing the same messages with confirms per batch (the drain ratio);
 * 2. write-to-consume latency p50/p99 at a steady 200 msg/s (from the producing transaction's
 *    start to the consumer), ours against the naive relay;
 * 3. the commit cost of the wake-up choice: 16 writers, no NOTIFY / NOTIFY in every transaction /
 *    ours (coalesced NOTIFY after commit).
 * Run: `npm run bench -w @saga/messaging`. Uses its own database and exchange, deletes both.
 * `BENCH_ONLY=drain` runs only the two drain ratios (batch BENCH_BATCH_SIZE and 500), for
 * measuring a relay change before and after without the minutes the other sections take.
 */
import amqp from 'amqplib'
import pg from 'pg'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  tapQueue,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { fileURLToPath } from 'node:url'
import { pgDatabase } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { createSignals } from '../src/signals.js'
import { createRelay, type Relay } from '../src/outbox/relay.js'
import { createCrossInstanceWakeup } from '../src/outbox/wakeup.js'
import { fmt, percentile, sane, sleep, until } from './measure.js'
import { startNaiveRelay, type NaiveRelay } from './naive-relay.js'
import { plainPublishRate } from './plain-publish.js'

const SQL = fileURLToPath(new URL('../sql/messaging.sql', import.meta.url))
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 20_000)
// The naive relay moves about 50 msg/s here (one fsync-bound confirm per message): 20,000 rows
// would take minutes, and its rate does not depend on the backlog size.
const NAIVE_BACKLOG = Number(process.env.BENCH_NAIVE_BACKLOG ?? 2_000)
const RATE = 200
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 10)
const WRITERS = 16
const COMMIT_SECONDS = Number(process.env.BENCH_COMMIT_SECONDS ?? 3)
const ROUNDS = Number(process.env.BENCH_COMMIT_ROUNDS ?? 3)
const DRAIN_ONLY = process.env.BENCH_ONLY === 'drain'
// The NOTIFY channel every mode of section 3 uses (the relay's default).
const WAKEUP_CHANNEL = 'outbox'

const db: TestDatabase = await createTestDatabase({ prefix: 'bench', sqlFiles: [SQL] })
const exchange = uniqueName('bench_ex')
const sinkQueue = uniqueName('bench_sink')
const pool = new pg.Pool({ connectionString: db.url, max: WRITERS + 2 })
pool.on('error', () => undefined)
const database = pgDatabase(pool)

const pending = async (): Promise<number> =>
  (
    await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox_message WHERE published_at IS NULL',
    )
  ).rows[0]!.n

/** A queue that takes every message and has no consumer (so consuming costs nothing); emptied between runs. */
async function withSink<T>(fn: () => Promise<T>): Promise<T> {
  const connection = await amqp.connect(AMQP_URL)
  const channel = await connection.createChannel()
  await channel.assertExchange(exchange, 'topic', { durable: true })
  await channel.assertQueue(sinkQueue, { durable: true })
  await channel.bindQueue(sinkQueue, exchange, '#')
  try {
    return await fn()
  } finally {
    await channel.deleteQueue(sinkQueue)
    await connection.close()
  }
}

async function backlog(count: number): Promise<void> {
  await pool.query('TRUNCATE outbox_message')
  await pool.query(
    `INSERT INTO outbox_message (id, type, routing_key, payload, headers)
     SELECT gen_random_uuid(), 'bench.happened.v1', 'bench.happened',
            jsonb_build_object('n', n, 'orderId', gen_random_uuid(), 'amount', 1999, 'currency', 'EUR'),
            '{"correlationId":"bench"}'::jsonb
     FROM generate_series(1, $1::int) AS n`,
    [count],
  )
  await pool.query('VACUUM ANALYZE outbox_message')
}

const BATCH = Number(process.env.BENCH_BATCH_SIZE ?? 100)
const relayOptions = {
  pool,
  amqpUrl: AMQP_URL,
  exchange,
  service: 'bench',
  retentionIntervalMs: 0,
  batchSize: BATCH,
}

/** The relay's CPU per message in the last `drain`, µs (this process: the relays, amqplib, pg). */
let lastDrainCpuUs = 0

async function drain(relays: number, batchSize = BATCH): Promise<number> {
  await backlog(BACKLOG)
  return withSink(async () => {
    // The end is seen from the relays' own 'published' signals (emitted after each commit), not by
    // counting pending rows every 10 ms: that count would load the database the relay drains.
    let published = 0
    const signals = createSignals()
    signals.on('published', () => (published += 1))
    const started = performance.now()
    const cpu = process.cpuUsage()
    const running: Relay[] = Array.from({ length: relays }, () =>
      createRelay({ ...relayOptions, batchSize, signals }),
    )
    await Promise.all(running.map((relay) => relay.start()))
    await until(() => Promise.resolve(published >= BACKLOG), 300_000, 'the backlog to drain')
    const seconds = (performance.now() - started) / 1_000
    const used = process.cpuUsage(cpu)
    lastDrainCpuUs = sane((used.user + used.system) / BACKLOG, 'relay CPU per message, µs', 0.1, 100_000)
    if ((await pending()) !== 0) throw new Error('bench: rows still pending after every row was published')
    await Promise.all(running.map((relay) => relay.stop()))
    return BACKLOG / seconds
  })
}

async function drainNaive(): Promise<number> {
  await backlog(NAIVE_BACKLOG)
  return withSink(async () => {
    const started = performance.now()
    const naive = await startNaiveRelay(pool, AMQP_URL, exchange)
    await until(async () => (await pending()) === 0, 600_000, 'the naive relay to drain')
    const seconds = (performance.now() - started) / 1_000
    await naive.stop()
    // The naive relay sleeps 1 s before its first look; count from its first look, to be fair.
    return NAIVE_BACKLOG / (seconds - 1)
  })
}

/**
 * Commits one row every 1/RATE s for LATENCY_SECONDS; returns write-to-consume latencies, ms,
 * sorted: from the start of the row's transaction to the tap's receipt. (From the resolved commit
 * instead, a loaded event loop can see the message arrive first: negative latencies.)
 */
async function latency(afterCommit: () => void, drainWaitMs = 30_000): Promise<number[]> {
  await pool.query('TRUNCATE outbox_message')
  const tap = await tapQueue(AMQP_URL, exchange)
  const writtenAt = new Map<string, number>()
  const total = RATE * LATENCY_SECONDS
  const writes: Promise<void>[] = []
  const failures: unknown[] = []
  const started = performance.now()
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1_000) / RATE
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    // The tap stamps arrivals with Date.now(): the write is stamped on the same clock.
    const startedAt = Date.now()
    writes.push(
      database
        .transaction((tx) =>
          enqueue(tx, {
            type: 'bench.happened.v1',
            routingKey: 'bench.happened',
            payload: { i },
            correlationId: 'bench',
          }),
        )
        .then((id) => {
          writtenAt.set(id, startedAt)
          afterCommit()
        })
        // Handled at once: a rejection waiting for Promise.all below would crash the run first.
        .catch((error: unknown) => void failures.push(error)),
    )
  }
  await Promise.all(writes)
  if (failures.length > 0) throw new Error(`bench: ${failures.length} commits failed`, { cause: failures[0] })
  await tap.waitForCount(total, drainWaitMs)
  await tap.delete()
  const latencies = tap.messages.map((m) => m.receivedAt - writtenAt.get(m.messageId!)!)
  return latencies.map((ms) => sane(ms, 'write-to-consume latency, ms', 0, 600_000)).sort((a, b) => a - b)
}

/** 16 writers committing one outbox row per transaction for COMMIT_SECONDS; returns tx/s. */
async function commitRate(mode: 'plain' | 'notify-in-tx' | 'coalesced'): Promise<number> {
  await pool.query('TRUNCATE outbox_message')
  await pool.query('VACUUM ANALYZE outbox_message')
  // Someone listens in every mode, as a relay would.
  const listener = new pg.Client({ connectionString: db.url })
  await listener.connect()
  await listener.query(`LISTEN ${WAKEUP_CHANNEL}`)
  const wakeup = createCrossInstanceWakeup({ pool, channel: WAKEUP_CHANNEL })
  let commits = 0
  const deadline = performance.now() + COMMIT_SECONDS * 1_000
  const writer = async (): Promise<void> => {
    while (performance.now() < deadline) {
      await database.transaction(async (tx) => {
        await enqueue(tx, {
          type: 'bench.happened.v1',
          routingKey: 'bench.happened',
          payload: { commits },
          correlationId: 'bench',
        })
        if (mode === 'notify-in-tx') await tx.query(`SELECT pg_notify('${WAKEUP_CHANNEL}', '')`)
      })
      if (mode === 'coalesced') wakeup.notify()
      commits += 1
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, writer))
  await wakeup.close()
  await listener.end()
  return commits / COMMIT_SECONDS
}

const line = (label: string, value: string): void => console.log(`  ${label.padEnd(58)} ${value}`)
const describe = (sorted: number[]): string =>
  `p50 ${fmt(percentile(sorted, 50), 1)} ms   p99 ${fmt(percentile(sorted, 99), 1)} ms   (n=${sorted.length})`

let cleaned: Promise<void> | undefined
const cleanup = (): Promise<void> =>
  (cleaned ??= (async () => {
    await pool.end().catch(() => undefined)
    await deleteBrokerObjects({ exchanges: [exchange], queues: [sinkQueue] }).catch(() => undefined)
    await db.drop()
  })())
// Ctrl-C must not leave the database, the exchange or a backlog behind.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130))
  })
}

try {
  const os = await import('node:os')
  console.log(
    `@saga/messaging benchmark (node ${process.version}, ${os.cpus().length} cores, load average ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(' ')} at start)`,
  )
  console.log(
    `\n1. Relay throughput, draining ${fmt(BACKLOG)} rows (batch ${BATCH}, one persistent message each)`,
  )
  // Each relay drain sits between two plain-publish runs of the same batch size, so a change in
  // the machine's load during the pair shows as spread rather than as a skewed ratio.
  const plainRate = (batchSize: number): Promise<number> =>
    withSink(() => plainPublishRate(AMQP_URL, exchange, BACKLOG, batchSize))
  const plainBefore = await plainRate(BATCH)
  const one = await drain(1)
  const plainAfter = await plainRate(BATCH)
  sane(one, 'relay drain, msg/s', 1, 1_000_000)
  line('ours, 1 relay', `${fmt(one)} msg/s`)
  line(
    `plain amqplib, confirms per batch of ${BATCH} (before, after)`,
    `${fmt(plainBefore)}, ${fmt(plainAfter)} msg/s`,
  )
  const ratio = sane((one / ((plainBefore + plainAfter) / 2)) * 100, 'drain ratio, %', 1, 1_000)
  line('drain ratio ours / plain', `${fmt(ratio)} %`)
  line('relay CPU per message (this process: relay, amqplib, pg)', `${fmt(lastDrainCpuUs, 1)} µs`)
  if (!DRAIN_ONLY) {
    const two = await drain(2)
    line('ours, 2 relays', `${fmt(two)} msg/s`)
  }
  const plainBigBefore = await plainRate(500)
  const big = await drain(1, 500)
  const plainBigAfter = await plainRate(500)
  line('ours, 1 relay, batch 500 (fewer fsync-bound confirm waits)', `${fmt(big)} msg/s`)
  line(
    'plain amqplib, confirms per batch of 500 (before, after)',
    `${fmt(plainBigBefore)}, ${fmt(plainBigAfter)} msg/s`,
  )
  const bigRatio = sane((big / ((plainBigBefore + plainBigAfter) / 2)) * 100, 'drain ratio, %', 1, 1_000)
  line('drain ratio ours / plain, batch 500', `${fmt(bigRatio)} %`)
  line('relay CPU per message, batch 500', `${fmt(lastDrainCpuUs, 1)} µs`)
  if (DRAIN_ONLY) process.exit(await cleanup().then(() => 0))
  const naive = await drainNaive()
  line(`naive (poll 1 s, confirm + UPDATE per message; ${fmt(NAIVE_BACKLOG)} rows)`, `${fmt(naive)} msg/s`)
  line('ratio ours (1 relay) / naive', `${fmt(one / naive, 1)}x`)

  console.log(`\n2. Write-to-consume latency at a steady ${RATE} msg/s for ${LATENCY_SECONDS} s`)
  const relay = createRelay(relayOptions)
  await relay.start()
  const oursLocal = await latency(() => relay.wake())
  await relay.stop()
  line('ours, committing instance wakes its relay', describe(oursLocal))
  const remote = createRelay({ ...relayOptions })
  await remote.start()
  const otherInstance = createCrossInstanceWakeup({ pool })
  await sleep(200)
  const oursRemote = await latency(() => otherInstance.notify())
  await otherInstance.close()
  await remote.stop()
  line('ours, relay of another instance (coalesced NOTIFY)', describe(oursRemote))
  const naiveRelay: NaiveRelay = await startNaiveRelay(pool, AMQP_URL, exchange)
  // It falls behind at this rate (see above), so give it the time its backlog needs.
  const naiveLatency = await latency(
    () => undefined,
    ((RATE * LATENCY_SECONDS) / Math.max(naive, 1)) * 2_000 + 30_000,
  )
  await naiveRelay.stop()
  line('naive', describe(naiveLatency))
  if (naive < RATE)
    console.log(
      `  (the naive relay moves ~${fmt(naive)} msg/s here, below ${RATE}: its backlog grows for the whole run)`,
    )
  line('ratio naive / ours p50', `${fmt(percentile(naiveLatency, 50) / percentile(oursLocal, 50), 0)}x`)
  line('ratio naive / ours p99', `${fmt(percentile(naiveLatency, 99) / percentile(oursLocal, 99), 0)}x`)

  console.log(
    `\n3. Commit cost of the wake-up: ${WRITERS} writers, one outbox row per transaction; median of ${ROUNDS} interleaved ${COMMIT_SECONDS} s rounds`,
  )
  const modes = ['plain', 'notify-in-tx', 'coalesced'] as const
  const rates: Record<(typeof modes)[number], number[]> = { plain: [], 'notify-in-tx': [], coalesced: [] }
  // Interleaved rounds, each in a rotated order, so a change in the machine's load (and whatever a
  // run leaves behind for the next) hits every mode alike.
  for (let round = 0; round < ROUNDS; round += 1) {
    for (let k = 0; k < modes.length; k += 1) {
      const mode = modes[(round + k) % modes.length]!
      rates[mode].push(await commitRate(mode))
    }
  }
  const median = (values: number[]): number =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    )
  const plain = median(rates.plain)
  const inTx = median(rates['notify-in-tx'])
  const ours = median(rates.coalesced)
  const all = (values: number[]): string => `[${values.map((v) => fmt(v)).join(', ')}]`
  line('no NOTIFY', `${fmt(plain)} tx/s ${all(rates.plain)}`)
  line(
    'NOTIFY in every transaction',
    `${fmt(inTx)} tx/s (${fmt((inTx / plain) * 100)}% of plain) ${all(rates['notify-in-tx'])}`,
  )
  line(
    'ours: coalesced NOTIFY after commit (<= 1 per 25 ms)',
    `${fmt(ours)} tx/s (${fmt((ours / plain) * 100)}% of plain) ${all(rates.coalesced)}`,
  )
} finally {
  await cleanup()
}
