import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ChildProcess } from 'node:child_process'
import { createDatabase, databaseUrl, dropDatabases } from './databases.js'
import { checkInvariants, type Verdict } from './invariants.js'
import { startProcess, stopProcess } from './procs.js'
import { createSchema } from './store.js'

/** One system under test, started for one round. */
export interface Running {
  /** Base URL of its order API (POST/GET /orders, PUT /stock/:sku). */
  url: string
  /** Pids whose process trees are its own (CPU and memory from /proc). */
  roots: () => number[]
  /** Its PostgreSQL databases (their backends' CPU counts as its own). */
  databases: string[]
  /** Whether the broker (RabbitMQ, `beam.smp`) is part of it. */
  usesBroker: boolean
  /** The invariant check over everything this round placed. */
  check(): Promise<Verdict>
  /** Stops its processes and drops its databases. */
  stop(): Promise<void>
}

/** How to start a contestant: `prefix` is unique per run and round (database names start with it). */
export interface Contestant {
  name: string
  start(prefix: string, adminUrl: string): Promise<Running>
}

/** A TCP port nothing listens on now (the kernel's pick). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

// The built server, from src/ (tests) as from dist/.
const SERVER = fileURLToPath(new URL('../dist/server.js', import.meta.url))
const RESTATE_BIN = (): string => {
  const pkg = fileURLToPath(import.meta.resolve('@restatedev/restate-server-linux-x64/package.json'))
  return join(pkg, '..', 'bin', 'restate-server')
}

/**
 * The Restate server (the binary from npm) on its own ports and a fresh base directory, with the
 * production profile's storage settings left at their defaults (RocksDB WAL on, fsync on).
 */
async function startRestateServer(): Promise<{
  child: ChildProcess
  ingress: string
  admin: string
  dir: string
}> {
  const dir = mkdtempSync(join(tmpdir(), 'peers-restate-'))
  const [ingress, admin, node] = [await freePort(), await freePort(), await freePort()]
  const env = {
    ...process.env,
    RESTATE_BASE_DIR: dir,
    RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingress}`,
    RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${admin}`,
    RESTATE_BIND_ADDRESS: `127.0.0.1:${node}`,
    RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${node}`,
    RESTATE_DISABLE_TELEMETRY: 'true',
    RESTATE_LOG_FORMAT: 'compact',
    RESTATE_LOG_DISABLE_ANSI_CODES: 'true',
  }
  const child = await startProcess(
    'restate-server',
    RESTATE_BIN(),
    ['--no-logo', '--listen-mode', 'tcp'],
    env,
    /roles .* were started/,
  )
  await waitFor(`http://127.0.0.1:${admin}/health`)
  await waitFor(`http://127.0.0.1:${ingress}/restate/health`)
  return { child, ingress: `http://127.0.0.1:${ingress}`, admin: `http://127.0.0.1:${admin}`, dir }
}

/** Waits until `url` answers 2xx (polled every 200 ms); throws after `timeoutMs`. */
export async function waitFor(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ok = await fetch(url).then(
      (res) => res.ok,
      () => false,
    )
    if (ok) return
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Registers the peer's endpoint with the Restate server (admin API `POST /deployments`). */
async function registerDeployment(admin: string, endpointPort: number): Promise<void> {
  const res = await fetch(`${admin}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri: `http://127.0.0.1:${endpointPort}`, force: true }),
  })
  if (!res.ok) throw new Error(`Restate admin /deployments answered ${res.status}: ${await res.text()}`)
}

/** A peer of packages/peers: its own database, its server process (server.ts) and for Restate the Restate server. */
function peer(kind: 'pgboss' | 'dbos' | 'restate', name: string): Contestant {
  return {
    name,
    async start(prefix, adminUrl) {
      const database = `${prefix}${kind}`
      await createDatabase(adminUrl, database)
      const children: ChildProcess[] = []
      let dir: string | undefined
      const stop = async () => {
        for (const child of children.reverse()) await stopProcess(child)
        if (dir) rmSync(dir, { recursive: true, force: true })
        await dropDatabases(adminUrl, database)
      }
      try {
        const url = databaseUrl(adminUrl, database)
        await createSchema(url)
        const port = await freePort()
        const args = [SERVER, kind, url, String(port)]
        let restate: Awaited<ReturnType<typeof startRestateServer>> | undefined
        if (kind === 'restate') {
          restate = await startRestateServer()
          children.push(restate.child)
          dir = restate.dir
          args.push(String(await freePort()), restate.ingress)
        }
        children.push(await startProcess(name, process.execPath, args, process.env, /^ready \d+/))
        if (restate) await registerDeployment(restate.admin, Number(args[4]))
        return {
          url: `http://127.0.0.1:${port}`,
          roots: () => children.map((c) => c.pid!).filter(Boolean),
          databases: [database],
          usesBroker: false,
          check: () => checkInvariants(url),
          stop,
        }
      } catch (error) {
        await stop()
        throw error
      }
    },
  }
}

/** The peers by name, in the order a round runs them (cli.ts adds the fleet after them). */
export const PEERS: Record<string, Contestant> = {
  dbos: peer('dbos', 'DBOS'),
  restate: peer('restate', 'Restate'),
  pgboss: peer('pgboss', 'pg-boss'),
}
