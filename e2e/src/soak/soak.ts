import fs from 'node:fs'
import os from 'node:os'
import { setStock } from '../api.js'
import { checks } from '../checks.js'
import { Fleet } from '../fleet.js'
import { checkInvariants } from '../invariants.js'
import { Ledger } from '../ledger.js'
import { SERVICES, type ServiceName } from '../run.js'
import { snapshot } from '../snapshot.js'
import { brokerState, type BrokerState } from './broker-check.js'
import { fireFault, releaseFaults, type FaultContext, type FiredFault } from './faults.js'
import { soakStock, startLoad, type LoadTally } from './load.js'
import { Random } from './random.js'
import { planFaults, type FaultKind, type PlannedFault } from './schedule.js'

/** How a soak runs; `seed` decides the fault schedule and the order mix. */
export interface SoakOptions {
  seed: number
  durationS: number
  ratePerS: number
  /** Share of orders the customer cancels (0-1). */
  cancelShare: number
  faults: readonly FaultKind[]
  /** Gap between faults, s. */
  gapS?: { min: number; max: number } | undefined
  /** Quiet time before the first fault, s (default 15). */
  warmupS?: number | undefined
  /**
   * Fire exactly this many rounds of `faults` (each kind once a round), the load going on until the
   * last one ended should they outlast `durationS`; default: rounds until `durationS`.
   */
  rounds?: number | undefined
  postgresRestartCommand?: string | undefined
  /** How long the fleet may take to settle once the load stopped, s (default 180). */
  settleS?: number | undefined
  /** The services' LOG_LEVEL (default warn: faults are logged, each order is not). */
  logLevel?: string | undefined
  /** Keep the services' logs (e2e/.runs/<run>) even when every invariant held. */
  keepLogs?: boolean | undefined
  /** Progress lines; default none. */
  say?: ((line: string) => void) | undefined
  /** Ends the load and the faults early; the fleet is still judged and torn down. */
  signal?: AbortSignal | undefined
}

/** The machine a soak ran on, with its load before and after (the machine may be shared). */
export interface MachineReport {
  cpus: string
  cores: number
  memoryGb: number
  node: string
  /** 1-minute load average at the start and at the end of the load. */
  loadBefore: number
  loadAfter: number
}

/** Everything a soak found; `ok` when every invariant held and every fault was done. */
export interface SoakReport {
  options: Omit<SoakOptions, 'say' | 'signal'>
  startedAt: string
  machine: MachineReport
  runId: string
  logDir: string
  planned: PlannedFault[]
  faults: FiredFault[]
  load: LoadTally
  /** Per invariant (checks.ts), its violations: empty when it held. */
  invariants: Record<string, string[]>
  orders: { total: number; confirmed: number; cancelled: number }
  messages: { published: number; republished: number }
  broker: BrokerState
  /** `/health/ready` of each service after the run. */
  health: Record<ServiceName, number | string>
  settleS: number
  ok: boolean
}

const machine = (): Omit<MachineReport, 'loadAfter'> => ({
  cpus: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  memoryGb: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  loadBefore: os.loadavg()[0] ?? 0,
})

/**
 * Fires the plan's faults at their times until `durationS`, or all of them when the plan is a number
 * of `rounds` (a fault never overlaps the previous one).
 */
async function runFaults(
  ctx: FaultContext,
  plan: PlannedFault[],
  started: number,
  { durationS, rounds, signal }: Pick<SoakOptions, 'durationS' | 'rounds' | 'signal'>,
  say: (line: string) => void,
): Promise<FiredFault[]> {
  const fired: FiredFault[] = []
  const elapsedS = () => (performance.now() - started) / 1000
  for (const fault of plan) {
    await pause((fault.atS - elapsedS()) * 1000, signal)
    if ((rounds === undefined && elapsedS() >= durationS) || signal?.aborted) break
    const result = await fireFault(ctx, fault, Math.round(elapsedS()))
    say(
      `${String(result.startedAtS).padStart(5)} s  ${result.kind} ${result.target}: ${result.error ? `FAILED: ${result.error}` : result.detail}`,
    )
    fired.push(result)
  }
  return fired
}

/** Sets the soak's stock through the inventory API and records it in the ledger. */
export async function stockUp(
  fleet: Fleet,
  ledger: Ledger,
  stock: ReturnType<typeof soakStock>,
): Promise<void> {
  const units: [string, number][] = [
    ...stock.plentiful.map((sku): [string, number] => [sku, stock.plentifulUnits]),
    [stock.scarce, stock.scarceUnits],
  ]
  for (const [sku, n] of units) {
    await setStock(fleet.one('inventory').url, sku, n)
    ledger.stock.set(sku, n)
  }
}

/** Each invariant of checks.ts over the settled fleet, by name. */
async function judgeByCheck(fleet: Fleet, ledger: Ledger): Promise<Record<string, string[]>> {
  const s = await snapshot(fleet)
  const seen = fleet.tap?.countsById() ?? new Map<string, number>()
  return Object.fromEntries(
    Object.entries(checks).map(([name, check]) => [name, check({ s, ledger, seen, allowRepublish: true })]),
  )
}

async function readiness(fleet: Fleet): Promise<Record<ServiceName, number | string>> {
  const entries = await Promise.all(
    SERVICES.map(async (service) => {
      try {
        const res = await fetch(`${fleet.one(service).url}/health/ready`, {
          signal: AbortSignal.timeout(5_000),
        })
        return [service, res.status] as const
      } catch (error) {
        return [service, error instanceof Error ? error.message : String(error)] as const
      }
    }),
  )
  return Object.fromEntries(entries) as Record<ServiceName, number | string>
}

/** Resolves after `ms`, or at once when `signal` aborts. */
const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const timer = setTimeout(done, Math.max(0, ms))
    signal?.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
  })

/** The verdict: every invariant held, nothing dead-lettered or waiting, every fault done, every service ready. */
const passed = (r: Omit<SoakReport, 'ok'>): boolean =>
  Object.values(r.invariants).every((v) => v.length === 0) &&
  r.broker.deadLettered.length === 0 &&
  r.broker.waiting.length === 0 &&
  r.faults.every((f) => !f.error) &&
  r.load.unresolved === 0 &&
  r.load.refused.length === 0 &&
  Object.values(r.health).every((status) => status === 200)

type Judgement = Pick<SoakReport, 'invariants' | 'orders' | 'messages' | 'broker' | 'health' | 'settleS'>

/** Lets the fleet settle (at most `settleS`), then judges it in SQL, on the tap and on the broker. */
export async function judge(fleet: Fleet, ledger: Ledger, settleS: number): Promise<Judgement> {
  const settling = performance.now()
  const flat = await checkInvariants(fleet, ledger, { allowRepublish: true, settleMs: settleS * 1000 })
  return {
    settleS: Math.round((performance.now() - settling) / 1000),
    invariants: await judgeByCheck(fleet, ledger),
    orders: { total: flat.orders, confirmed: flat.confirmed, cancelled: flat.cancelled },
    messages: { published: flat.published, republished: flat.republished },
    broker: await brokerState(fleet.names),
    health: await readiness(fleet),
  }
}

/** The soak on a started fleet: stock, load and faults for the duration, then the judgement. */
async function soakOn(fleet: Fleet, options: SoakOptions, startedAt: string): Promise<SoakReport> {
  const say = options.say ?? (() => undefined)
  say(`fleet ${fleet.names.id} ready; logs in ${fleet.logDir}`)
  const ledger = new Ledger()
  const stock = soakStock(options.ratePerS, options.durationS)
  await stockUp(fleet, ledger, stock)
  const { seed, durationS, faults, gapS, warmupS, rounds } = options
  const planned = planFaults({ seed, durationS, faults, gapS, warmupS, rounds })
  const before = machine()
  const started = performance.now()
  const rng = new Random(seed ^ 0x5eed)
  const load = startLoad({ orderUrl: () => fleet.one('order').url, ...options, stock, rng, ledger })
  say(
    `load: ${options.ratePerS} orders/s for ${durationS} s; ${planned.length} faults planned (seed ${seed})`,
  )
  const ctx = { fleet, postgresRestartCommand: options.postgresRestartCommand }
  const fired = await runFaults(ctx, planned, started, options, say)
  await pause(started + durationS * 1000 - performance.now(), options.signal)
  const loadAfter = os.loadavg()[0] ?? 0
  await releaseFaults(fleet)
  const tally = await load.stop()
  say(`load stopped: ${tally.placed} orders placed; settling`)
  const judgement = await judge(fleet, ledger, options.settleS ?? 180)
  const { say: _say, signal: _signal, ...settings } = options
  const report = {
    options: { ...settings, logLevel: options.logLevel ?? 'warn' },
    startedAt,
    machine: { ...before, loadAfter },
    runId: fleet.names.id,
    logDir: fleet.logDir,
    planned,
    faults: fired,
    load: tally,
    ...judgement,
  }
  return { ...report, ok: passed(report) }
}

/**
 * A chaos soak: starts a fleet of its own (e2e's harness: own databases, exchange and queues, the
 * broker link through a fault proxy, a tap on the exchange), puts a steady load with cancellations
 * on it for `durationS` while the seeded schedule fires faults from the menu (schedule.ts), then
 * undoes what a fault left, lets the fleet settle and judges it: every invariant of checks.ts over
 * the four databases and the tap (every order final, each effect once, books balanced, no pending or
 * parked outbox row), and on the broker no message dead-lettered or left waiting. `signal` ends the
 * load and the faults early (the judgement still runs). Tears the fleet down; its logs are kept
 * when something failed or `keepLogs`.
 */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const startedAt = new Date().toISOString()
  const logLevel = options.logLevel ?? 'warn'
  const fleet = await Fleet.start({
    env: Object.fromEntries(SERVICES.map((s) => [s, { LOG_LEVEL: logLevel }])),
  })
  let ok = false
  try {
    const report = await soakOn(fleet, options, startedAt)
    ok = report.ok
    return report
  } finally {
    await releaseFaults(fleet).catch(() => undefined)
    await fleet.stop()
    if (ok && !options.keepLogs) fs.rmSync(fleet.logDir, { recursive: true, force: true })
  }
}
