// The orders list and the search of `npm run bench:console`: what a person paging through 100,000
// orders, filtering them, and searching by each kind of id waits for, through the console.
import { randomBytes } from 'node:crypto'
import type { RunDatabases } from '../databases.js'
import { percentile } from '../stats.js'
import { seededIds, type SeededIds } from './seed.js'

const say = (line: string) => console.log(`[bench:console] ${line}`)

/** Median, p95 and max of `times` (ms), as one line. */
export function figures(times: readonly number[]): string {
  const sorted = [...times].sort((a, b) => a - b)
  const ms = (p: number) => percentile(sorted, p).toFixed(1)
  return `${sorted.length} reads, median ${ms(50)} ms, p95 ${ms(95)} ms, max ${(sorted.at(-1) ?? NaN).toFixed(1)} ms`
}

/**
 * Times one GET of `url` (the body read to its end).
 * @throws Error when the answer is not a 200
 */
export async function timedGet<T>(url: string): Promise<{ ms: number; body: T }> {
  const t0 = performance.now()
  const res = await fetch(url)
  const text = await res.text()
  const ms = performance.now() - t0
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 200)}`)
  return { ms, body: JSON.parse(text) as T }
}

interface Page {
  items: { id: string }[]
  nextCursor: string | null
}

/**
 * Pages through every order, 100 a page, following nextCursor: the time of each page, the first
 * 50 pages against the last 50 (a keyset page costs the same at any depth; an OFFSET would grow),
 * and that no order was seen twice.
 */
async function walkAll(consoleUrl: string, orders: number): Promise<void> {
  const times: number[] = []
  const seen = new Set<string>()
  let cursor: string | null = null
  do {
    const url: string = `${consoleUrl}/api/orders?limit=100${cursor ? `&cursor=${cursor}` : ''}`
    const { ms, body } = await timedGet<Page>(url)
    times.push(ms)
    for (const item of body.items) seen.add(item.id)
    cursor = body.nextCursor
  } while (cursor)
  say(
    `orders list, every page of 100 (${times.length} pages, ${seen.size.toLocaleString('en')} distinct orders of ` +
      `${orders.toLocaleString('en')}+ placed): first 50 pages ${figures(times.slice(0, 50))}; last 50 ${figures(times.slice(-50))}`,
  )
}

/** The searches of one seeded order: each kind of id someone holds for it. */
const searches = (ids: SeededIds): Array<[string, string]> => [
  ['order id', ids.orderId],
  ['order id start (8 hex digits)', ids.orderId.slice(0, 8)],
  ['customer id (5 orders)', ids.customerId],
  ['message id', ids.messageId],
  ['idempotency key', ids.idempotencyKey],
  // The seeded rows carry no traceparent: a trace id finds nothing, after every outbox was read.
  ['trace id (a miss: every outbox read)', randomBytes(16).toString('hex')],
]

/**
 * The list filtered by customer and by id prefix, then `GET /api/search` by each kind of id, over
 * `samples` seeded orders (one warm-up round first, not counted).
 */
async function filtersAndSearch(
  consoleUrl: string,
  dbs: RunDatabases,
  orders: number,
  samples: number,
): Promise<void> {
  const sampled: SeededIds[] = []
  for (let i = 0; i < samples + 1; i++)
    sampled.push(await seededIds(dbs, orders, 1 + Math.floor(Math.random() * orders)))
  const times = new Map<string, number[]>()
  const time = (label: string, ms: number, counted: boolean) => {
    if (counted) times.set(label, [...(times.get(label) ?? []), ms])
  }
  for (const [i, ids] of sampled.entries()) {
    const counted = i > 0
    const byCustomer = await timedGet<Page>(`${consoleUrl}/api/orders?customerId=${ids.customerId}`)
    time('list by customer', byCustomer.ms, counted)
    const byPrefix = await timedGet<Page>(`${consoleUrl}/api/orders?idPrefix=${ids.orderId.slice(0, 4)}`)
    time('list by id prefix (4 hex digits)', byPrefix.ms, counted)
    for (const [kind, text] of searches(ids)) {
      const found = await timedGet<{ to: string | null }>(
        `${consoleUrl}/api/search?q=${encodeURIComponent(text)}`,
      )
      const expected = kind.startsWith('trace') ? null : kind.startsWith('customer') ? 'list' : ids.orderId
      const landed =
        found.body.to === null ? null : found.body.to.startsWith('/orders?') ? 'list' : found.body.to.slice(8)
      if (landed !== expected) throw new Error(`search by ${kind} ${text} landed on ${found.body.to}`)
      time(`search by ${kind}`, found.ms, counted)
    }
  }
  for (const [label, ms] of times) say(`${label}: ${figures(ms)}`)
}

/**
 * Plans of the list's statements on the seeded table (EXPLAIN ANALYZE in the order database): a page
 * deep in the keyset, a customer's orders, an id prefix. Printed so a run shows which index served each.
 */
async function plans(dbs: RunDatabases, orders: number, sample: SeededIds): Promise<void> {
  const depth = Math.floor(orders * 0.9)
  const columns = 'id, customer_id, status, created_at'
  const [deep] = await dbs.query<{ created_at: Date; id: string }>(
    'order',
    'SELECT created_at, id::text FROM orders ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1',
    [depth],
  )
  const statements: Array<[string, string, unknown[]]> = [
    [
      `page after position ${depth.toLocaleString('en')}`,
      `SELECT ${columns} FROM orders WHERE (created_at, id) < ($1::timestamptz, $2::uuid) ORDER BY created_at DESC, id DESC LIMIT 101`,
      [deep!.created_at, deep!.id],
    ],
    [
      'a customer',
      `SELECT ${columns} FROM orders WHERE customer_id = $1::uuid ORDER BY created_at DESC, id DESC LIMIT 21`,
      [sample.customerId],
    ],
    [
      'an id prefix',
      `SELECT ${columns} FROM orders WHERE id BETWEEN $1::uuid AND $2::uuid ORDER BY created_at DESC, id DESC LIMIT 21`,
      [
        `${sample.orderId.slice(0, 4)}0000-0000-0000-0000-000000000000`,
        `${sample.orderId.slice(0, 4)}ffff-ffff-ffff-ffff-ffffffffffff`,
      ],
    ],
  ]
  for (const [label, sql, params] of statements) {
    const rows = await dbs.query<{ 'QUERY PLAN': string }>(
      'order',
      `EXPLAIN (ANALYZE, COSTS OFF) ${sql}`,
      params,
    )
    const lines = rows.map((r) => r['QUERY PLAN'].trim())
    const scans = lines
      .filter((l) => /Scan|^(->\s*)?Sort(?! Key| Method)/.test(l))
      .map((l) => l.replace(/^->\s*/, '').replace(/\s*\(actual.*$/, ''))
    const execution = lines.find((l) => l.startsWith('Execution Time'))
    say(`plan, ${label}: ${scans.join(' <- ')}; ${execution}`)
  }
}

/** Everything of this module, in order: the walk, the filters and searches, the plans. */
export async function listAndSearch(consoleUrl: string, dbs: RunDatabases, orders: number): Promise<void> {
  await walkAll(consoleUrl, orders)
  await filtersAndSearch(consoleUrl, dbs, orders, Number(process.env.CONSOLE_BENCH_SEARCHES ?? 40))
  await plans(dbs, orders, await seededIds(dbs, orders, 1 + Math.floor(orders / 2)))
}
