import { setTimeout as sleep } from 'node:timers/promises'
import {
  createServerCpu,
  machineCpuSeconds,
  scrapeServices,
  type CpuSample,
  type ServiceMetrics,
} from './cpu.js'
import type { HttpClient } from './http.js'
import { anyPendingSince, prepareStock, readOrders } from './orders.js'
import { placeOrders, type Placement } from './place.js'
import type { LoadSettings } from './settings.js'
import { completedPerSecond, fmt, largestBacklog, percentile, sorted } from './stats.js'

/** Everything one steady-rate run measured. Durations in ms, rates per second, CPU in ms per saga. */
export interface RunResult {
  rate: number
  seconds: number
  placed: number
  accepted: number
  acceptedPerSecond: number
  acceptMs: { p50: number; p99: number }
  /** POST -> 503 answer time, ms (NaN when nothing was shed). */
  shedMs: { p50: number; p99: number; max: number }
  /** Accepted orders (answered 201) the final read of GET /orders did not find at all: must be 0. */
  notFound: number
  /** POST -> CONFIRMED or CANCELLED, from the orders' own createdAt and updatedAt. */
  terminalMs: { p50: number; p90: number; p99: number; max: number }
  completed: number
  completedPerSecond: number
  /** Accepted orders not terminal when the harness stopped waiting (still PENDING, or not found at all). */
  stillPending: number
  largestBacklog: number
  /** Most outbox rows pending over all services in the samples while placing (every `SCRAPE_EVERY_S` s, and at its end). */
  largestOutboxPending: number
  /** From the last POST's answer to no PENDING order of the run (or the drain timeout), ms. */
  drainMs: number
  /** Answers by HTTP status, `0` = no answer. */
  statuses: Record<string, number>
  unavailableWithoutRetryAfter: number
  /** POSTs the client sent late (it was the limit, not the fleet). */
  late: number
  byStatus: Record<string, number>
  /** CPU ms per completed saga by process group; `total` sums the fleet's own (services, its backends, RabbitMQ). */
  cpuMsPerSaga: Record<string, number>
  /**
   * Database writes of consumers per completed saga, all services together: committed handler
   * (inbox) transactions plus batch-recorder statements.
   */
  consumerTxPerSaga: number | undefined
  /** Share of the machine's CPU busy during the run (all processes, all users), 0..1. */
  machineBusy: number | undefined
  /** The harness's own CPU as a share of one core during placing. */
  clientCore: number
}

const cpuDelta = (
  before: Record<string, ServiceMetrics>,
  after: Record<string, ServiceMetrics>,
  serversBefore: CpuSample,
  serversAfter: CpuSample,
): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [name, metrics] of Object.entries(after)) {
    const start = before[name]?.cpuSeconds
    if (start !== undefined && metrics.cpuSeconds !== undefined) out[name] = metrics.cpuSeconds - start
  }
  for (const [name, value] of Object.entries(serversAfter)) {
    const start = serversBefore[name]
    if (start !== undefined) out[name] = value - start
  }
  return out
}

/**
 * The fleet's outbox backlog (rows pending over all services) as the progress lines show it: `read`
 * scrapes every service's /metrics; `last` is the latest read, `largest` the most any read saw.
 */
function outboxBacklog(http: HttpClient, services: LoadSettings['services']) {
  const seen = { last: 0, largest: 0 }
  return {
    get last(): number {
      return seen.last
    },
    get largest(): number {
      return seen.largest
    },
    async read(): Promise<void> {
      const all = await scrapeServices(http, services)
      seen.last = Object.values(all).reduce((a, m) => a + (m.outboxPending ?? 0), 0)
      seen.largest = Math.max(seen.largest, seen.last)
    },
  }
}

const sumHandled = (metrics: Record<string, ServiceMetrics>): number =>
  Object.values(metrics).reduce((a, m) => a + (m.handled ?? 0) + (m.recorderBatches ?? 0), 0)

/**
 * One run: sets the load sku's stock, places `rate` orders/s for `seconds` s, waits (one request a
 * second) until no order of the run is PENDING or `drainTimeoutMs` passed, reads every order once,
 * and takes CPU from each service's /metrics and from /proc before and after. A progress line goes
 * to stderr once a second. Throws when the fleet is not reachable.
 */
export async function runOnce(
  http: HttpClient,
  settings: LoadSettings,
  rate: number,
  seconds: number,
): Promise<RunResult> {
  await prepareStock(http, settings.services.inventory)
  const serverCpu = createServerCpu(settings.postgresUrl, settings.databases)
  try {
    const metricsBefore = await scrapeServices(http, settings.services)
    const serversBefore = await serverCpu.sample()
    const machineBefore = await machineCpuSeconds()
    const clientBefore = process.cpuUsage()
    const backlog = outboxBacklog(http, settings.services)
    const placement = await placeOrders({
      http,
      orderUrl: settings.services.order,
      rate,
      seconds,
      maxInFlight: settings.maxInFlight,
      onTick(p, elapsed, inFlight) {
        // Sampled in the background so a slow /metrics or /proc never delays the next sends.
        void serverCpu.sample()
        if ((elapsed - 1) % SCRAPE_EVERY_S === 0) void backlog.read()
        process.stderr.write(progressLine(p, rate, seconds, elapsed, inFlight, backlog.last))
      },
    })
    const client = process.cpuUsage(clientBefore)
    // The backlog peaks as placing ends, between two of the samples above.
    await backlog.read()
    const placingSeconds = (placement.endedAt - placement.startedAt) / 1_000
    const since = placement.startedAt - 1_000
    await drain(http, settings.services.order, since, settings.drainTimeoutMs)
    const drainMs = Date.now() - placement.endedAt
    const metricsAfter = await scrapeServices(http, settings.services)
    const serversAfter = await serverCpu.sample()
    const machineAfter = await machineCpuSeconds()
    const read = await readOrders(http, settings.services.order, placement.ids, since)

    const sagas = [...read.sagas.values()]
    const done = sagas.filter((s) => s.terminalAt !== undefined)
    const terminal = sorted(done.map((s) => s.terminalAt! - s.createdAt))
    const accept = sorted(placement.acceptMs)
    const shed = sorted(placement.shedMs)
    const cpu = cpuDelta(metricsBefore, metricsAfter, serversBefore, serversAfter)
    const perSaga = cpuMsPerSaga(cpu, done.length)
    const handled = sumHandled(metricsAfter) - sumHandled(metricsBefore)
    return {
      rate,
      seconds,
      placed: Object.values(placement.statuses).reduce((a, b) => a + b, 0),
      accepted: placement.ids.size,
      acceptedPerSecond: placement.ids.size / placingSeconds,
      acceptMs: { p50: percentile(accept, 50), p99: percentile(accept, 99) },
      shedMs: { p50: percentile(shed, 50), p99: percentile(shed, 99), max: shed.at(-1) ?? Number.NaN },
      notFound: placement.ids.size - sagas.length,
      terminalMs: { ...quantiles(terminal), max: terminal.at(-1) ?? Number.NaN },
      completed: done.length,
      completedPerSecond: completedPerSecond(sagas),
      stillPending: placement.ids.size - done.length,
      largestBacklog: largestBacklog(sagas).size,
      largestOutboxPending: backlog.largest,
      drainMs,
      statuses: placement.statuses,
      unavailableWithoutRetryAfter: placement.unavailableWithoutRetryAfter,
      late: placement.late,
      byStatus: read.byStatus,
      cpuMsPerSaga: perSaga,
      consumerTxPerSaga: done.length > 0 && handled > 0 ? handled / done.length : undefined,
      machineBusy: busyShare(machineBefore, machineAfter),
      clientCore: (client.user + client.system) / 1e6 / placingSeconds,
    }
  } finally {
    await serverCpu.close()
  }
}

/**
 * Seconds between the reads of the fleet's /metrics while placing (for the outbox backlog the
 * progress lines show). Each read makes every service render its registry and take its database
 * snapshot (pg_stat_activity and pg_stat_user_tables: about 1 ms of PostgreSQL on a warm connection,
 * up to 10 on a new one), and that cost lands in the CPU per saga this harness reports; read every
 * second it was 15 times what a Prometheus scraping every 15 s costs the fleet.
 */
export const SCRAPE_EVERY_S = 5

/**
 * The progress line of one tick (ends in a newline): orders accepted so far, the non-201 answers by
 * status, the p99 accept time (ms) of the last `rate` accepted POSTs, requests in flight and the
 * fleet's outbox backlog as last scraped.
 */
function progressLine(
  p: Placement,
  rate: number,
  seconds: number,
  elapsed: number,
  inFlight: number,
  outboxPending: number,
): string {
  const acc = sorted(p.acceptMs.slice(-rate))
  const errors = Object.entries(p.statuses).filter(([s]) => s !== '201')
  return (
    `[load] ${rate}/s ${elapsed}/${seconds} s  accepted ${p.ids.size}  ` +
    `${errors.length ? `errors ${errors.map(([s, n]) => `${s}:${n}`).join(' ')}  ` : ''}` +
    `accept p99 ${fmt(percentile(acc, 99), 0)} ms  in flight ${inFlight}  outbox pending ${outboxPending}\n`
  )
}

/**
 * CPU ms per completed saga (at least one) of each part of `cpu` (seconds by part, see `cpuDelta`),
 * plus `total`: every part but `postgres-all`.
 */
function cpuMsPerSaga(cpu: Record<string, number>, completed: number): Record<string, number> {
  const perSaga: Record<string, number> = {}
  for (const [name, value] of Object.entries(cpu)) perSaga[name] = (value * 1_000) / Math.max(completed, 1)
  // The fleet's own: four services, the backends of its databases, and the broker (see cpu.ts).
  perSaga.total = Object.entries(perSaga)
    .filter(([name]) => name !== 'postgres-all')
    .reduce((a, [, v]) => a + v, 0)
  return perSaga
}

/** Waits, asking once a second, until no order placed since `since` (epoch ms) is PENDING or `timeoutMs` ms passed. */
async function drain(http: HttpClient, orderUrl: string, since: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline && (await anyPendingSince(http, orderUrl, since))) await sleep(1_000)
}

/** The 50th, 90th and 99th percentiles of `values` (sorted ascending). */
function quantiles(values: number[]): { p50: number; p90: number; p99: number } {
  return { p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99) }
}

/** The machine's busy share (0 to 1) between two /proc samples; undefined when either is missing. */
function busyShare(
  before: Awaited<ReturnType<typeof machineCpuSeconds>>,
  after: Awaited<ReturnType<typeof machineCpuSeconds>>,
): number | undefined {
  return before && after ? (after.busy - before.busy) / (after.total - before.total) : undefined
}
