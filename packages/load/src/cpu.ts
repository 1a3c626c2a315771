import { readdir, readFile } from 'node:fs/promises'
import pg from 'pg'
import type { HttpClient } from './http.js'

/** CPU seconds used so far, by process group (service name, `postgres`, `rabbitmq`); absent = unreadable. */
export type CpuSample = Record<string, number>

/** What a service's /metrics says that the harness uses. */
export interface ServiceMetrics {
  /** prom-client's `process_cpu_seconds_total` (user + system), seconds. */
  cpuSeconds: number | undefined
  /** `saga_messaging_relay_pending`: outbox rows not yet published. */
  outboxPending: number | undefined
  /** Sum of `saga_messaging_consumer_handled_total` over handlers: committed consumer transactions. */
  handled: number | undefined
  /** Sum of `saga_messaging_recorder_batches_total`: the batch recorders' statements (one round trip each). */
  recorderBatches: number | undefined
}

const sampleValue = (text: string, name: string): number | undefined => {
  let total: number | undefined
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{')) continue
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (Number.isFinite(value)) total = (total ?? 0) + value
  }
  return total
}

/** Reads the figures the harness needs from Prometheus text; series with labels are summed. */
export function parseMetrics(text: string): ServiceMetrics {
  return {
    cpuSeconds: sampleValue(text, 'process_cpu_seconds_total'),
    outboxPending: sampleValue(text, 'saga_messaging_relay_pending'),
    handled: sampleValue(text, 'saga_messaging_consumer_handled_total'),
    recorderBatches: sampleValue(text, 'saga_messaging_recorder_batches_total'),
  }
}

/** Scrapes every service's /metrics (in parallel); a service that does not answer is left out. */
export async function scrapeServices(
  http: HttpClient,
  services: Record<string, string>,
): Promise<Record<string, ServiceMetrics>> {
  const entries = await Promise.all(
    Object.entries(services).map(async ([name, base]) => {
      const text = await http.text(`${base}/metrics`)
      return [name, text === undefined ? undefined : parseMetrics(text)] as const
    }),
  )
  return Object.fromEntries(entries.filter((e): e is [string, ServiceMetrics] => e[1] !== undefined))
}

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux build we run on.
const CLOCK_TICKS = 100

/** utime + stime of one process in seconds, or undefined when it is gone or unreadable. */
async function processCpu(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

// Command name per pid, read once per pid: a busy machine has hundreds of processes, and reading
// every one's comm each second cost the harness a tenth of a core.
const commands = new Map<number, string>()

/** Pids of processes whose command name (`/proc/<pid>/comm`) is one of `names`. */
async function pidsNamed(names: readonly string[]): Promise<number[]> {
  const pids: number[] = []
  const alive = new Set<number>()
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    alive.add(pid)
    let comm = commands.get(pid)
    if (comm === undefined) {
      comm = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim()
      commands.set(pid, comm)
    }
    if (names.includes(comm)) pids.push(pid)
  }
  for (const pid of commands.keys()) if (!alive.has(pid)) commands.delete(pid)
  return pids
}

/**
 * CPU of the shared servers from /proc, where this machine can read them: RabbitMQ (`beam.smp`)
 * and PostgreSQL. PostgreSQL is split in two: `postgres` = the backends serving the fleet's
 * databases (`databases`, e.g. `order_service`), which are this fleet's own work even on a shared server,
 * and `postgres-all` = every postgres process (background writers, WAL, other users' backends).
 * RabbitMQ cannot be split that way: on a shared broker its figure includes other users' traffic.
 */
export function createServerCpu(postgresUrl: string | undefined, databases: readonly string[]) {
  const admin = postgresUrl ? new pg.Client({ connectionString: postgresUrl }) : undefined
  admin?.on('error', () => undefined)
  const connected = admin?.connect().then(
    () => true,
    () => false,
  )
  // Last reading per pid, kept after the process ends, so a group's sum never goes backwards when
  // a connection closes (its CPU until the last sample still counts).
  const seen = { postgres: new Map<number, number>(), 'postgres-all': new Map(), rabbitmq: new Map() }
  const update = async (group: keyof typeof seen, pids: number[]): Promise<number | undefined> => {
    for (const pid of pids) {
      const cpu = await processCpu(pid)
      if (cpu !== undefined) seen[group].set(pid, cpu)
    }
    const values = [...(seen[group].values() as Iterable<number>)]
    return values.length > 0 ? values.reduce((a, b) => a + b, 0) : undefined
  }

  async function fleetBackends(): Promise<number[]> {
    if (!admin || !(await connected)) return []
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[])',
      [databases],
    )
    return rows.map((r) => r.pid)
  }

  return {
    /**
     * A sample: CPU seconds per group so far. Processes that ended keep their last reading, and one
     * that began since the previous sample counts in full, so take samples during a run (the
     * harness does, once a second) for short-lived processes to be counted.
     */
    async sample(): Promise<CpuSample> {
      const out: CpuSample = {}
      const groups: Array<[keyof typeof seen, Promise<number[]>]> = [
        ['postgres', fleetBackends()],
        ['postgres-all', pidsNamed(['postgres'])],
        ['rabbitmq', pidsNamed(['beam.smp'])],
      ]
      for (const [group, pids] of groups) {
        const total = await update(group, await pids)
        if (total !== undefined) out[group] = total
      }
      return out
    },
    close: async () => {
      if (admin && (await connected)) await admin.end().catch(() => undefined)
    },
  }
}

/** Total machine CPU seconds (all cores, all processes) from /proc/stat, for the load of the run. */
export async function machineCpuSeconds(): Promise<{ busy: number; total: number } | undefined> {
  const text = await readFile('/proc/stat', 'utf8').catch(() => undefined)
  const line = text?.split('\n').find((l) => l.startsWith('cpu '))
  if (!line) return undefined
  const ticks = line.trim().split(/\s+/).slice(1).map(Number)
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0)
  const total = ticks.reduce((a, b) => a + b, 0)
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS }
}
