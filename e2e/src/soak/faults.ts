import { exec, execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import pg from 'pg'
import type { Fleet } from '../fleet.js'
import { infra, SERVICES, type ServiceName } from '../run.js'
import type { ServiceProcess } from '../service-process.js'
import { delay } from '../wait.js'
import type { PlannedFault } from './schedule.js'

const run = promisify(execFile)
const shell = promisify(exec)

/** A fault as it happened: the plan, when it really started, how long it took and what it did. */
export interface FiredFault extends PlannedFault {
  /** s after the load began. */
  startedAtS: number
  durationMs: number
  /** What it did, e.g. `killed payment#1 (pid 4242); ready again 5.1 s later`. */
  detail: string
  /** Set when the fault could not be done as planned (the run then fails). */
  error?: string
}

/** What firing a fault needs. */
export interface FaultContext {
  fleet: Fleet
  /** The shell command of `postgres-restart`; that fault fails without it. */
  postgresRestartCommand?: string | undefined
}

/** The one process of `service` (a soak runs one instance of each). */
const instanceOf = (fleet: Fleet, service: ServiceName): ServiceProcess => fleet.one(service)

const targets = (target: ServiceName | 'all'): ServiceName[] => (target === 'all' ? [...SERVICES] : [target])

/** Processes SIGSTOPped and not yet continued: `releaseFaults` continues them whatever happened. */
const frozen = new Set<number>()

async function kill(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const proc = instanceOf(ctx.fleet, fault.target as ServiceName)
  const pid = proc.pid
  await proc.kill()
  await delay(fault.holdMs)
  const restarted = performance.now()
  proc.start()
  await proc.waitReady(120_000)
  const readyS = ((performance.now() - restarted) / 1000).toFixed(1)
  return `killed ${proc.name} (pid ${pid}), down ${fault.holdMs} ms, ready ${readyS} s after its restart`
}

async function stop(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const proc = instanceOf(ctx.fleet, fault.target as ServiceName)
  const pid = proc.pid
  if (pid === undefined || !proc.running) throw new Error(`${proc.name} is not running`)
  process.kill(pid, 'SIGSTOP')
  frozen.add(pid)
  try {
    await delay(fault.holdMs)
  } finally {
    process.kill(pid, 'SIGCONT')
    frozen.delete(pid)
  }
  return `stopped ${proc.name} (pid ${pid}) for ${fault.holdMs} ms`
}

/**
 * The broker connections of `services` in this fleet: named `<service>-relay` or
 * `<service>-consumer` (messaging's connection names) and coming through the fleet's proxy (their
 * peer port is one of the proxy's upstream ports), so another fleet's connections of the same
 * names on the shared broker are never touched.
 */
async function fleetConnections(fleet: Fleet, services: ServiceName[]): Promise<string[]> {
  const ports = new Set(fleet.proxy?.upstreamPorts() ?? [])
  const names = new Set(services.flatMap((s) => [`${s}-relay`, `${s}-consumer`]))
  const { stdout } = await run(
    'rabbitmqctl',
    ['list_connections', '-q', '--no-table-headers', 'pid', 'peer_port', 'client_properties'],
    { timeout: 60_000 },
  )
  return stdout.split('\n').flatMap((line) => {
    const [pid, port] = line.trim().split(/\s+/)
    const name = /\{"connection_name","([^"]+)"\}/.exec(line)?.[1]
    return pid && name && names.has(name) && ports.has(Number(port)) ? [pid] : []
  })
}

/** Each service holds two broker connections: its relay's and its consumer's. */
const CONNECTIONS_PER_SERVICE = 2

async function brokerClose(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const services = targets(fault.target)
  // Right after another fault the connections may still be coming back: close them once they are.
  const deadline = Date.now() + 20_000
  let pids = await fleetConnections(ctx.fleet, services)
  while (pids.length < services.length * CONNECTIONS_PER_SERVICE && Date.now() < deadline) {
    await delay(1_000)
    pids = await fleetConnections(ctx.fleet, services)
  }
  await Promise.all(
    pids.map((pid) =>
      run('rabbitmqctl', ['close_connection', pid, 'closed by the soak'], { timeout: 60_000 }),
    ),
  )
  return `closed ${pids.length} broker connections of ${fault.target}`
}

async function brokerCut(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const proxy = ctx.fleet.proxy
  if (!proxy) throw new Error('the fleet has no broker proxy')
  proxy.cut()
  try {
    await delay(fault.holdMs)
  } finally {
    proxy.restore()
  }
  return `cut the broker link for ${fault.holdMs} ms`
}

async function dbTerminate(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const services = targets(fault.target)
  const admin = new pg.Client({ connectionString: infra.postgresUrl })
  await admin.connect()
  try {
    // The services' own sessions only (their application_name): never the checker's or anyone else's.
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = ANY($1) AND application_name = ANY($2)`,
      [services.map((s) => ctx.fleet.names.database[s]), services.map((s) => `${s}-service`)],
    )
    return `terminated ${rows[0]?.n ?? 0} database sessions of ${fault.target}`
  } finally {
    await admin.end()
  }
}

async function queueDelete(ctx: FaultContext, fault: PlannedFault): Promise<string> {
  const prefix = `${ctx.fleet.names.queuePrefix[fault.target as ServiceName]}.`
  const { stdout } = await run('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name'], {
    timeout: 60_000,
  })
  const queues = stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((name) => name.startsWith(prefix) && !name.endsWith('.dlq'))
    .sort()
  if (queues.length === 0) throw new Error(`no queue of ${fault.target} to delete`)
  const queue = queues[fault.pick % queues.length]!
  const connection = await amqp.connect(infra.amqpUrl)
  try {
    const channel = await connection.createChannel()
    const { messageCount } = await channel.deleteQueue(queue)
    return `deleted queue ${queue} holding ${messageCount} messages`
  } finally {
    await connection.close()
  }
}

async function postgresRestart(ctx: FaultContext): Promise<string> {
  if (!ctx.postgresRestartCommand) throw new Error('postgres-restart needs --postgres-restart-command')
  await shell(ctx.postgresRestartCommand, { timeout: 120_000 })
  return `ran ${ctx.postgresRestartCommand}`
}

const FIRE: Record<PlannedFault['kind'], (ctx: FaultContext, fault: PlannedFault) => Promise<string>> = {
  kill,
  stop,
  'broker-close': brokerClose,
  'broker-cut': brokerCut,
  'db-terminate': dbTerminate,
  'queue-delete': queueDelete,
  'postgres-restart': postgresRestart,
}

/**
 * Fires one planned fault and waits until it is over (a killed service ready again, a stopped
 * one continued, a cut link restored). Never throws: a fault that could not be done is returned
 * with `error`.
 * @param startedAtS s since the load began, for the report
 */
export async function fireFault(
  ctx: FaultContext,
  fault: PlannedFault,
  startedAtS: number,
): Promise<FiredFault> {
  const started = performance.now()
  try {
    const detail = await FIRE[fault.kind](ctx, fault)
    return { ...fault, startedAtS, durationMs: Math.round(performance.now() - started), detail }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return {
      ...fault,
      startedAtS,
      durationMs: Math.round(performance.now() - started),
      detail: 'failed',
      error: message,
    }
  }
}

/**
 * Undoes what an interrupted fault left behind: continues stopped processes, restores the broker
 * link and starts any service process that is not running. Safe to call at any time.
 */
export async function releaseFaults(fleet: Fleet): Promise<void> {
  for (const pid of frozen) {
    try {
      process.kill(pid, 'SIGCONT')
    } catch {
      // Already gone.
    }
    frozen.delete(pid)
  }
  fleet.proxy?.restore()
  const down = fleet.instances.filter((p) => !p.running)
  for (const proc of down) proc.start()
  await Promise.all(down.map((p) => p.waitReady(120_000)))
}
