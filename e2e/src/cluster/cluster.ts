import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setStock } from '../api.js'
import { RunDatabases } from '../databases.js'
import { checkInvariants } from '../invariants.js'
import { Ledger } from '../ledger.js'
import { SERVICES, type ServiceName } from '../run.js'
import { repoRoot } from '../service-process.js'
import { soakStock, startLoad, type LoadTally } from '../soak/load.js'
import { Random } from '../soak/random.js'
import { eventually } from '../wait.js'
import { compose, docker, NODES, queueLeaders, rabbitmqctl } from './docker.js'
import {
  killBusiestLeader,
  partitionNode,
  stopConnectedNodes,
  type FaultContext,
  type FaultOutcome,
} from './faults.js'
import { ClusterTap } from './tap.js'

/** How `npm run test:cluster` runs. */
export interface ClusterOptions {
  /** Orders a second of the steady load (soak's mix, `cancelShare` of them cancelled). */
  ratePerS: number
  cancelShare: number
  /** Orders the load places before each fault and again after its recovery (signals, not seconds). */
  ordersAround: number
  /** How long the fleet may take to settle after a fault's load stopped, s. */
  settleS: number
  /** Leave the cluster running at the end (default: `down -v`). */
  keep: boolean
  say: (line: string) => void
}

/** One fault's verdict: what happened, the load around it, and the invariants after it. */
export interface FaultVerdict extends FaultOutcome {
  load: Pick<LoadTally, 'placed' | 'retries' | 'unresolved' | 'refused'>
  /** Every order so far (the ledger is cumulative), after the fleet settled. */
  orders: { total: number; confirmed: number; cancelled: number }
  published: number
  republished: number
  /** Messages left in the fleet's queues and dead-letter queues once settled (both must be 0). */
  waiting: number
  deadLettered: number
  violations: string[]
  ok: boolean
}

/** The whole run: versions, durations, and a verdict per fault. */
export interface ClusterReport {
  startedAt: string
  versions: { rabbitmq: string; docker: string; node: string; cores: number }
  startS: number
  totalS: number
  faults: FaultVerdict[]
  tapReconnects: number
  ok: boolean
}

/** The compose fleet from the host (docker-compose.yml's loopback ports, infra/compose/cli.env). */
const ORDER_URL = 'http://127.0.0.1:3001'
const INVENTORY_URL = 'http://127.0.0.1:3003'
const DB_PORT: Record<ServiceName, number> = {
  order: 15432,
  payment: 15433,
  inventory: 15434,
  shipment: 15435,
}
const dbUrl = (s: ServiceName) =>
  `postgresql://${s}_service:${s}_service@127.0.0.1:${DB_PORT[s]}/${s}_service`
/** The nodes' published AMQP ports, as the admin user (the tap). */
const TAP_URLS = [5673, 5674, 5675].map((p) => `amqp://admin:admin@127.0.0.1:${p}/saga`)

const seconds = (t0: number): number => Math.round((performance.now() - t0) / 1000)

/**
 * Builds the service image (a copy of the Dockerfile without its `# syntax=` line, which asks a
 * registry for the BuildKit frontend; the built-in one builds it the same) and starts the cluster
 * file's fleet from a clean slate, waiting on every health check.
 */
async function up(say: (line: string) => void): Promise<void> {
  await compose(['down', '-v', '--remove-orphans'])
  const dockerfile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'saga-cluster-')), 'Dockerfile')
  const lines = fs.readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8').split('\n')
  fs.writeFileSync(dockerfile, lines.filter((l) => !l.startsWith('# syntax=')).join('\n'))
  say('building the service image (minutes the first time)')
  await docker(
    ['build', '-q', '-t', 'saga/service:local', '--target', 'runtime', '-f', dockerfile, '.'],
    60 * 60_000,
  )
  say('starting three RabbitMQ nodes, four PostgreSQL, the services (compose up --wait)')
  await compose(['up', '-d', '--wait', '--no-build'], 20 * 60_000)
}

/** The stock the inventory seeded (SEED_CATALOGUE) and the load's own SKUs, all in the ledger. */
async function stockUp(
  dbs: RunDatabases,
  ledger: Ledger,
  stock: ReturnType<typeof soakStock>,
): Promise<void> {
  const seeded = await dbs.query<{ sku: string; total: number }>(
    'inventory',
    'SELECT sku, available + reserved AS total FROM stock',
  )
  for (const row of seeded) ledger.stock.set(row.sku, Number(row.total))
  for (const sku of stock.plentiful) {
    await setStock(INVENTORY_URL, sku, stock.plentifulUnits)
    ledger.stock.set(sku, stock.plentifulUnits)
  }
  await setStock(INVENTORY_URL, stock.scarce, stock.scarceUnits)
  ledger.stock.set(stock.scarce, stock.scarceUnits)
}

/** Waits until the load placed `n` more orders than it had when called. */
async function ordersPlaced(tally: LoadTally, n: number): Promise<void> {
  const target = tally.placed + n
  await eventually(`${n} more orders placed`, () => tally.placed >= target, {
    timeoutMs: 10 * 60_000,
    intervalMs: 200,
  })
}

/** The fleet's queues holding messages once drained (waiting) and its DLQs holding any (dead-lettered). */
async function brokerLeft(): Promise<{ waiting: number; deadLettered: number }> {
  const count = async () => {
    const queues = (await queueLeaders('rabbit-1')).filter((q) =>
      /^(order|payment|inventory|shipment)\./.test(q.queue),
    )
    const sum = (dlq: boolean) =>
      queues.filter((q) => q.queue.endsWith('.dlq') === dlq).reduce((n, q) => n + q.messages, 0)
    return { waiting: sum(false), deadLettered: sum(true) }
  }
  return eventually(
    'the fleet queues drained',
    async () => ((await count()).waiting === 0 ? count() : false),
    {
      timeoutMs: 60_000,
      intervalMs: 1_000,
    },
  ).catch(count)
}

interface Phase {
  dbs: RunDatabases
  tap: ClusterTap
  ledger: Ledger
  stock: ReturnType<typeof soakStock>
  rng: Random
  options: ClusterOptions
}

/**
 * One fault under load: the load starts, places `ordersAround` orders, the fault fires and
 * recovers, the load places `ordersAround` more and stops; the fleet settles and is judged.
 */
async function underLoad(
  p: Phase,
  fire: (ctx: FaultContext) => Promise<FaultOutcome[]>,
): Promise<FaultVerdict[]> {
  const { ratePerS, cancelShare, ordersAround, settleS, say } = p.options
  const load = startLoad({
    orderUrl: () => ORDER_URL,
    ratePerS,
    cancelShare,
    stock: p.stock,
    rng: p.rng,
    ledger: p.ledger,
  })
  let outcomes: FaultOutcome[]
  try {
    await ordersPlaced(load.tally, ordersAround)
    outcomes = await fire({ orderUrl: ORDER_URL, ledger: p.ledger, sku: p.stock.plentiful[0] as string, say })
    await ordersPlaced(load.tally, ordersAround)
  } finally {
    await load.stop()
  }
  const report = await checkInvariants(p, p.ledger, { allowRepublish: true, settleMs: settleS * 1000 })
  const left = await brokerLeft()
  const { placed, retries, unresolved, refused } = load.tally
  return outcomes.map((o) => {
    const verdict = {
      ...o,
      load: { placed, retries, unresolved, refused },
      orders: { total: report.orders, confirmed: report.confirmed, cancelled: report.cancelled },
      published: report.published,
      republished: report.republished,
      ...left,
      violations: report.violations,
    }
    const ok =
      verdict.violations.length === 0 &&
      left.waiting === 0 &&
      left.deadLettered === 0 &&
      unresolved === 0 &&
      refused.length === 0
    for (const line of formatVerdict({ ...verdict, ok })) say(line)
    return { ...verdict, ok }
  })
}

/** A verdict as printed lines: the recovery times, the load, the books. */
export function formatVerdict(v: FaultVerdict): string[] {
  const recovery = Object.entries(v.recoveryS)
    .map(([k, s]) => `${k} ${s} s`)
    .join(', ')
  return [
    `${v.ok ? 'PASS' : 'FAIL'} ${v.name} ${v.target} (${v.detail}): ${recovery}`,
    `     load ${v.load.placed} orders, retries ${JSON.stringify(v.load.retries)}; so far ${v.orders.total} orders (${v.orders.confirmed} confirmed, ${v.orders.cancelled} cancelled), ${v.published} published, ${v.republished} republished; queues left ${v.waiting}, dead-lettered ${v.deadLettered}`,
    ...v.violations.slice(0, 10).map((line) => `     violation: ${line}`),
  ]
}

async function versions(): Promise<ClusterReport['versions']> {
  const rabbit = await rabbitmqctl('rabbit-1', ['version']).catch((e: unknown) => String(e))
  const engine = await docker(['version', '--format', '{{.Server.Version}}']).catch((e: unknown) => String(e))
  return { rabbitmq: rabbit.trim(), docker: engine.trim(), node: process.version, cores: os.cpus().length }
}

/**
 * `npm run test:cluster`: the fleet of docker-compose.cluster.yml (three RabbitMQ nodes) under a
 * steady load, through three faults in turn: kill -9 of the busiest quorum queue's leader (then
 * started again), a clean stop of each node a service is connected to (each started again before
 * the next), a 30 s network partition of the node leading the most queues. After each the fleet
 * settles and e2e's invariants are checked over the four databases and a replicated tap (every order
 * terminal, each effect once, every published message seen), and no message waits or is
 * dead-lettered. Tears the cluster down (`down -v`) unless `keep`.
 */
export async function runCluster(options: ClusterOptions): Promise<ClusterReport> {
  const startedAt = new Date().toISOString()
  const t0 = performance.now()
  const say = options.say
  await up(say)
  const startS = seconds(t0)
  say(`cluster and fleet up in ${startS} s; nodes ${NODES.join(', ')}`)
  const dbs = new RunDatabases({
    urls: Object.fromEntries(SERVICES.map((s) => [s, dbUrl(s)])) as Record<ServiceName, string>,
  })
  let tap: ClusterTap | undefined
  try {
    tap = await ClusterTap.start(TAP_URLS, 'saga.events', `cluster-tap.${Date.now().toString(36)}`)
    const ledger = new Ledger()
    const stock = soakStock(options.ratePerS, 600)
    await stockUp(dbs, ledger, stock)
    const phase: Phase = { dbs, tap, ledger, stock, rng: new Random(37), options }
    const faults = [
      ...(await underLoad(phase, async (ctx) => [await killBusiestLeader(ctx)])),
      ...(await underLoad(phase, stopConnectedNodes)),
      ...(await underLoad(phase, async (ctx) => [await partitionNode(ctx)])),
    ]
    return {
      startedAt,
      versions: await versions(),
      startS,
      totalS: seconds(t0),
      faults,
      tapReconnects: tap.reconnects,
      ok: faults.every((f) => f.ok),
    }
  } finally {
    await tap?.delete()
    await dbs.close()
    if (!options.keep) await compose(['down', '-v', '--remove-orphans']).catch((e: unknown) => say(String(e)))
  }
}
