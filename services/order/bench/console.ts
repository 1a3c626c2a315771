/**
 * Benchmark of the order service's console reads on a large table: seeds BENCH_ORDERS (default
 * 100,000) orders with lines and timelines (bench/seed.ts) into a database of its own, then times
 * GET /orders/:id, GET /orders with each filter (first page, and a page deep into the results
 * through its cursor) and GET /orders/stats through the order routes on the fleet's app defaults
 * (`inject`: the HTTP stack without a socket), BENCH_ROUNDS times each (default 100), printing the
 * median and p95 per route in ms. BENCH_EXPLAIN=1 also prints each statement's plan
 * (EXPLAIN ANALYZE, BUFFERS). The database is dropped at the end, also on failure.
 * Run: `npm run bench:console -w @saga/order-service`.
 */
import { pgDatabase } from '@saga/messaging'
import { createServiceApp } from '@saga/service-kit'
import { createServiceTestDatabase } from '@saga/service-kit/testing'
import type pg from 'pg'
import { loadConfig } from '../src/config.js'
import { Prisma, type PrismaClient } from '../src/generated/prisma/client.js'
import { database, dbPlugin } from '../src/plugins/db.js'
import { orderRoutes } from '../src/routes/orders.js'
import { orderStatsSql } from '../src/store/stats.js'
import { listOrdersSql, type OrderFilters } from '../src/store/views.js'
import { seedOrders } from './seed.js'

const ORDERS = Number(process.env.BENCH_ORDERS ?? 100_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100)
const SPAN_MS = Number(process.env.BENCH_SPAN_MS ?? 60 * 60_000)
const EXPLAIN = process.env.BENCH_EXPLAIN === '1'

async function run(): Promise<void> {
  // The routes on the fleet's app defaults over the service's own db plugin, so the pool's sessions
  // run with the settings production has (service-kit's sessionConnection).
  const app = await createServiceApp({ service: 'order', logLevel: 'silent', fastify: { logger: false } })
  await app.register(dbPlugin, { config: loadConfig({ DATABASE_URL: db.url, LOG_LEVEL: 'silent' }) })
  await app.register(orderRoutes, { db: app.prisma, database: pgDatabase(app.pool), clock: () => new Date() })
  await app.ready()
  try {
    const started = performance.now()
    // Through the fixture's pool: the service's sessions cut statements at 5 s.
    const seeded = await seedOrders(db.pool, ORDERS, SPAN_MS)
    // What autovacuum does to a table this size after the inserts: statistics for the planner and
    // the visibility map the index-only scans need.
    await db.pool.query('VACUUM ANALYZE orders, order_lines, order_events')
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    console.log(
      `seeded ${seeded.orders} orders, ${seeded.lines} lines, ${seeded.events} events in ${seconds} s`,
    )
    await printMix(app)
    const cases = await benchCases(app)
    console.log(`\n${ROUNDS} rounds per route (ms)`)
    console.log(`${'route'.padEnd(64)} ${'median'.padStart(8)} ${'p95'.padStart(8)} ${'items'.padStart(6)}`)
    for (const { label, url } of cases) {
      const { median, p95, items } = await time(app, url)
      console.log(
        `${label.padEnd(64)} ${median.toFixed(2).padStart(8)} ${p95.toFixed(2).padStart(8)} ${String(items).padStart(6)}`,
      )
    }
    if (EXPLAIN) await explainAll(app)
  } finally {
    await app.close()
  }
}

type App = Awaited<ReturnType<typeof createServiceApp>> & { pool: pg.Pool; prisma: PrismaClient }

/** The seeded mix: orders by status and outcome, for reading the timings against. */
async function printMix(app: App): Promise<void> {
  const { rows } = await app.pool.query<{ status: string; reason: string | null; n: number }>(
    `SELECT status, cancellation_reason AS reason, count(*)::int AS n FROM orders GROUP BY 1, 2 ORDER BY 1, 2`,
  )
  for (const row of rows) console.log(`  ${row.status} ${row.reason ?? ''}: ${row.n}`)
}

/** Every filter of GET /orders, its first page and a deep page (the cursor after 40 pages of 20). */
const FILTERS: Array<[string, Record<string, string>]> = [
  ['no filter', {}],
  ['status=CONFIRMED', { status: 'CONFIRMED' }],
  ['status=PENDING', { status: 'PENDING' }],
  ['waitingFor=payment', { waitingFor: 'payment' }],
  ['waitingFor=shipment', { waitingFor: 'shipment' }],
  ['cancellationReason=customer_requested', { cancellationReason: 'customer_requested' }],
  ['cancellationReason=card_declined', { cancellationReason: 'card_declined' }],
  ['placedAfter (last 5 min)', { placedAfter: ago(5 * 60_000) }],
  ['placedBefore (30 min ago)', { placedBefore: ago(30 * 60_000) }],
  [
    'status=CANCELLED&placedAfter&placedBefore (30 to 20 min ago)',
    {
      status: 'CANCELLED',
      placedAfter: ago(30 * 60_000),
      placedBefore: ago(20 * 60_000),
    },
  ],
  ['deadlineBefore=now (overdue)', { deadlineBefore: ago(0) }],
  [
    'deadlineBefore=now+5min&waitingFor=inventory',
    { deadlineBefore: ago(-5 * 60_000), waitingFor: 'inventory' },
  ],
]

function ago(ms: number): string {
  return new Date(Date.now() - ms).toISOString()
}

async function benchCases(app: App): Promise<Array<{ label: string; url: string }>> {
  const { rows } = await db.pool.query<{ id: string }>(
    'SELECT id::text FROM orders ORDER BY random() LIMIT 1',
  )
  const cases = [{ label: 'GET /orders/:id', url: `/orders/${rows[0]?.id}` }]
  for (const [label, filters] of FILTERS) {
    const query = new URLSearchParams(filters).toString()
    cases.push({ label: `GET /orders ${label}`, url: `/orders?${query}` })
    const deep = await cursorAfter(app, query, 40)
    if (deep) cases.push({ label: `GET /orders ${label}, page 41`, url: `/orders?${query}&cursor=${deep}` })
  }
  cases.push({ label: 'GET /orders/stats (300 s)', url: '/orders/stats' })
  cases.push({ label: 'GET /orders/stats?windowSeconds=3600', url: '/orders/stats?windowSeconds=3600' })
  return cases
}

/** The cursor of page `pages + 1` (20 a page), or undefined when there are fewer pages. */
async function cursorAfter(app: App, query: string, pages: number): Promise<string | undefined> {
  let cursor: string | undefined
  for (let i = 0; i < pages; i++) {
    const url = `/orders?${query}${cursor ? `&cursor=${cursor}` : ''}`
    const page = (await app.inject({ method: 'GET', url })).json<{ nextCursor: string | null }>()
    if (!page.nextCursor) return undefined
    cursor = page.nextCursor
  }
  return cursor
}

/** Median and p95 of `ROUNDS` requests (after 5 to warm up), ms; and the items of the last answer. */
async function time(app: App, url: string): Promise<{ median: number; p95: number; items: number | string }> {
  const took: number[] = []
  let body: { items?: unknown[] } = {}
  for (let i = 0; i < ROUNDS + 5; i++) {
    const start = performance.now()
    const response = await app.inject({ method: 'GET', url })
    const ms = performance.now() - start
    if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
    if (i >= 5) took.push(ms)
    body = response.json()
  }
  took.sort((a, b) => a - b)
  const at = (q: number) => took[Math.min(took.length - 1, Math.floor(q * took.length))] ?? NaN
  return { median: at(0.5), p95: at(0.95), items: body.items?.length ?? '-' }
}

/** EXPLAIN ANALYZE of the list statement for each filter and of the stats statement. */
async function explainAll(app: App): Promise<void> {
  const plans: Array<[string, Prisma.Sql]> = FILTERS.map(([label, filters]) => [
    `GET /orders ${label}`,
    listOrdersSql({ ...toFilters(filters), limit: 20 }),
  ])
  plans.push(['GET /orders/stats (300 s)', orderStatsSql(300)])
  for (const [label, sql] of plans) {
    const rows = await app.prisma.$queryRaw<Array<{ 'QUERY PLAN': string }>>(
      Prisma.sql`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`,
    )
    console.log(`\n== ${label}\n${rows.map((row) => row['QUERY PLAN']).join('\n')}`)
  }
}

function toFilters(filters: Record<string, string>): OrderFilters {
  const date = (text: string | undefined) => (text === undefined ? undefined : new Date(text))
  return {
    status: filters.status as OrderFilters['status'],
    waitingFor: filters.waitingFor as OrderFilters['waitingFor'],
    cancellationReason: filters.cancellationReason,
    placedAfter: date(filters.placedAfter),
    placedBefore: date(filters.placedBefore),
    deadlineBefore: date(filters.deadlineBefore),
  }
}

// Last, after every declaration it uses.
const db = await createServiceTestDatabase(database, 'order_bench')
try {
  await run()
} finally {
  await db.drop()
}
