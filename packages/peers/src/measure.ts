import { setTimeout as sleep } from 'node:timers/promises'
import { createServerCpu, machineCpuSeconds } from '@saga/load/dist/cpu.js'
import type { HttpClient } from '@saga/load/dist/http.js'
import { anyPendingSince, readOrders } from '@saga/load/dist/orders.js'
import { placeOrders } from '@saga/load/dist/place.js'
import { completedPerSecond, largestBacklog, percentile, sorted } from '@saga/load/dist/stats.js'
import type { Running } from './contestants.js'
import type { createTreeMeter } from './procs.js'
import { orderBody } from './rules.js'

/** What one steady step measured. Times in ms, rates per second. */
export interface Step {
  rate: number
  seconds: number
  accepted: number
  /** POSTs not answered 201. */
  refused: number
  /** POSTs the client sent more than 100 ms late (the client was the limit). */
  late: number
  completed: number
  completedPerSecond: number
  /** Accepted orders not final when the drain timeout passed. */
  stillPending: number
  /** POST -> CONFIRMED or CANCELLED (the order rows' own created/updated times). */
  p50: number
  p99: number
  largestBacklog: number
  /** CPU ms per completed saga, all of the contestant's processes, its PostgreSQL backends and (the fleet) the broker. */
  cpuMsPerSaga: number
  /** Share of the whole machine's CPU busy during the step (every process, every user), 0..1; NaN when unreadable. */
  machineBusy: number
  /** Why the step does not hold (p99 over 1 s, a backlog, refusals), or undefined when it holds. */
  notHeld: string | undefined
}

/** Options of `measureStep`. */
export interface StepOptions {
  http: HttpClient
  target: Running
  meter: ReturnType<typeof createTreeMeter>
  postgresUrl: string
  rate: number
  seconds: number
  /** Number of the step's first order in the failure mix (rules.ts `orderBody`). */
  firstOrder: number
  drainTimeoutMs: number
}

/**
 * Places `rate` orders/s for `seconds` s with packages/load's open-loop client and the failure mix,
 * waits until none of them is PENDING (or the drain timeout), reads them back once, and takes CPU
 * from /proc before and after. A step holds when every POST was accepted on time, everything
 * finished within the drain timeout, POST -> final p99 stayed within 1 s, and no backlog grew through
 * the step: never more than 2 s of orders (`2 × rate`) in flight at once. (Completed/s against the
 * offered rate would not do: over a short step the last sagas' latency alone lowers it.)
 */
export async function measureStep(options: StepOptions): Promise<Step> {
  const { http, target, meter, rate, seconds } = options
  const servers = createServerCpu(options.postgresUrl, target.databases)
  try {
    const cpu = async () => {
      const s = await servers.sample()
      return (await meter.sample()) + (s.postgres ?? 0) + (target.usesBroker ? (s.rabbitmq ?? 0) : 0)
    }
    const before = await cpu()
    const machineBefore = await machineCpuSeconds()
    const placement = await placeOrders({
      http,
      orderUrl: target.url,
      rate,
      seconds,
      maxInFlight: 256,
      body: (n) => orderBody(options.firstOrder + n),
      onTick: () => void cpu(),
    })
    const since = placement.startedAt - 1_000
    const deadline = Date.now() + options.drainTimeoutMs
    while (Date.now() < deadline && (await anyPendingSince(http, target.url, since))) {
      void cpu()
      await sleep(250)
    }
    const after = await cpu()
    const machineAfter = await machineCpuSeconds()
    const read = await readOrders(http, target.url, placement.ids, since)
    const sagas = [...read.sagas.values()]
    const done = sagas.filter((s) => s.terminalAt !== undefined)
    const times = sorted(done.map((s) => s.terminalAt! - s.createdAt))
    const refused = Object.entries(placement.statuses).reduce((a, [s, n]) => a + (s === '201' ? 0 : n), 0)
    const step: Step = {
      rate,
      seconds,
      accepted: placement.ids.size,
      refused,
      late: placement.late,
      completed: done.length,
      completedPerSecond: completedPerSecond(sagas),
      stillPending: placement.ids.size - done.length,
      p50: percentile(times, 50),
      p99: percentile(times, 99),
      largestBacklog: largestBacklog(sagas).size,
      cpuMsPerSaga: ((after - before) * 1_000) / Math.max(done.length, 1),
      machineBusy:
        machineBefore && machineAfter
          ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total)
          : Number.NaN,
      notHeld: undefined,
    }
    step.notHeld = whyNotHeld(step)
    return step
  } finally {
    await servers.close()
  }
}

/** Why a step does not hold, or undefined (see `measureStep`). */
function whyNotHeld(step: Step): string | undefined {
  if (step.refused > 0) return `${step.refused} POSTs not accepted`
  if (step.stillPending > 0) return `${step.stillPending} orders not final after the drain timeout`
  if (!(step.p99 <= 1_000)) return `p99 ${Math.round(step.p99)} ms > 1,000 ms`
  if (step.largestBacklog > 2 * step.rate)
    return `${step.largestBacklog} sagas in flight at once, more than 2 s of orders (${2 * step.rate})`
  if (step.late > 0) return `the client sent ${step.late} POSTs late`
  return undefined
}
