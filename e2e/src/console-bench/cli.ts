// `npm run bench:console`: what the saga console costs, on a fleet of its own (e2e's Fleet: the four
// services as processes with their own databases and broker names, then the console).
//  1. An order's page (`GET /api/orders/:id`, which joins the four services' records) with
//     CONSOLE_BENCH_ORDERS (default 100,000) confirmed sagas seeded into the databases: median, p95
//     and max over repeated reads of seeded and freshly placed orders.
//  2. The orders list and search (list.ts): every page of the list, filtered by customer and by id
//     prefix, and a search by each kind of id, with the plans of the list's statements.
//  3. The fleet page with 1 and with 20 tabs (server-sent events on /api/live), three windows each,
//     interleaved: the requests the services answered and the CPU they used in each window.
// It prints figures and judges nothing; docs/console.md records them with the machine and date.
import { readFileSync } from 'node:fs'
import { orderBody, placeOrder } from '../api.js'
import { Fleet } from '../fleet.js'
import { sumMetric } from '../metrics.js'
import { SERVICES } from '../run.js'
import { eventually } from '../wait.js'
import { figures, listAndSearch, timedGet } from './list.js'
import { seedConfirmedSagas, seededOrderId } from './seed.js'

const orders = Number(process.env.CONSOLE_BENCH_ORDERS ?? 100_000)
const reads = Number(process.env.CONSOLE_BENCH_READS ?? 200)
const windowMs = Number(process.env.CONSOLE_BENCH_WINDOW_MS ?? 20_000)
const say = (line: string) => console.log(`[bench:console] ${line}`)

const fleet = await Fleet.start({ adminToken: 'bench-console-admin-token-0123' })
try {
  const started = Date.now()
  await seedConfirmedSagas(fleet.dbs!, orders)
  say(
    `seeded ${orders.toLocaleString('en')} confirmed sagas in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
  const placed = []
  for (let i = 0; i < 10; i++)
    placed.push(
      (await placeOrder(fleet.one('order').url, orderBody([{ sku: 'SKU-001', quantity: 1 }]))).order.id,
    )
  // The console's default poll interval (the e2e suite polls faster).
  const consoleUrl = (await fleet.startConsole({ CONSOLE_POLL_MS: '2000' })).url
  for (const id of placed) {
    await eventually(`order ${id} terminal`, async () => {
      const res = await fetch(`${fleet.one('order').url}/orders/${id}`)
      return ((await res.json()) as { status: string }).status !== 'PENDING'
    })
  }
  const ids = [...placed]
  for (let i = 0; i < 10; i++)
    ids.push(await seededOrderId(fleet.dbs!, 1 + Math.floor(Math.random() * orders)))
  await orderPage(consoleUrl, ids)
  await listAndSearch(consoleUrl, fleet.dbs!, orders)
  // Interleaved, so a drift of the machine's load shows as spread rather than as a difference.
  for (const count of [1, 20, 1, 20, 1, 20]) await tabs(consoleUrl, count)
} finally {
  await fleet.stop()
}

/** Times `GET /api/orders/:id` round-robin over `ids` (20 warm-up reads first, not counted). */
async function orderPage(consoleUrl: string, ids: string[]): Promise<void> {
  const read = async (id: string): Promise<number> => (await timedGet(`${consoleUrl}/api/orders/${id}`)).ms
  for (let i = 0; i < 20; i++) await read(ids[i % ids.length]!)
  const times: number[] = []
  for (let i = 0; i < reads; i++) times.push(await read(ids[i % ids.length]!))
  say(`order page, ${orders.toLocaleString('en')} orders: ${figures(times)}`)
}

/**
 * Opens `count` SSE readers of /api/live for `windowMs` and reports the requests the four services
 * answered (their http_request_duration_seconds counts) and the CPU their processes used meanwhile.
 */
async function tabs(consoleUrl: string, count: number): Promise<void> {
  const stop = new AbortController()
  let events = 0
  const readers = Array.from({ length: count }, async () => {
    const res = await fetch(`${consoleUrl}/api/live`, { signal: stop.signal })
    const decoder = new TextDecoder()
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      events += decoder.decode(chunk, { stream: true }).split('\n\n').length - 1
    }
  })
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  const requests0 = await sumMetric(fleet, 'http_request_duration_seconds_count')
  const cpu0 = servicesCpuMs()
  const events0 = events
  await new Promise((resolve) => setTimeout(resolve, windowMs))
  const requests = (await sumMetric(fleet, 'http_request_duration_seconds_count')) - requests0
  const cpu = servicesCpuMs() - cpu0
  stop.abort()
  await Promise.allSettled(readers)
  say(
    `fleet page, ${count} tab${count === 1 ? '' : 's'}, ${windowMs / 1000} s: the services answered ${requests} requests ` +
      `(${((requests * 1000) / windowMs).toFixed(1)}/s) using ${cpu} ms CPU; the tabs got ${events - events0} events`,
  )
}

/** utime + stime of the four services' processes, in ms (from /proc; Linux only). */
function servicesCpuMs(): number {
  let ticks = 0
  for (const p of fleet.instances) {
    if (!p.pid || !SERVICES.includes(p.service)) continue
    const fields = readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks * 10
}
