import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { deleteBrokerObjects, freePort } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dropDatabases, SERVICES } from '../src/bootstrap.js'

// `npm start` as a user runs it, on a fleet of its own: `--prefix` gives it its own databases,
// exchange and queues, and the ports are free ones, so it never meets another run or a developer's
// fleet. RABBITMQCTL=false skips the per-service broker users (the documented fallback: AMQP_URL's
// user): broker-users.int.test.ts proves them, and removing them again costs a rabbitmqctl call each.
const execFileAsync = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const startJs = fileURLToPath(new URL('../dist/start.js', import.meta.url))
const prefix = `t${randomBytes(3).toString('hex')}_`
const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until none of `pids` is running; returns those still running after `ms`. */
const survivors = async (pids: number[], ms = 10_000): Promise<number[]> => {
  const deadline = Date.now() + ms
  while (pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  return pids.filter(isAlive)
}

/** One `npm start` (or `node start.js`) process with its output collected. */
class Run {
  output = ''
  readonly exited: Promise<number | null>
  private waiters: (() => void)[] = []
  readonly pids = new Set<number>()

  constructor(
    readonly child: ChildProcess,
    readonly ports: Record<string, number>,
  ) {
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString()
      for (const w of this.waiters) w()
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  }

  static async start(command: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
    const ports: Record<string, number> = {}
    for (const s of SERVICES) ports[s] = await freePort()
    ports.console = await freePort()
    const portEnv = Object.fromEntries(
      [...SERVICES, 'console'].map((s) => [`${s.toUpperCase()}_PORT`, String(ports[s])]),
    )
    const child = spawn(command, args, {
      cwd: root,
      env: {
        ...process.env,
        POSTGRES_URL: postgresUrl,
        AMQP_URL: amqpUrl,
        RABBITMQCTL: 'false',
        LOG_LEVEL: 'info',
        ADMIN_TOKEN: 'start-test-admin-token-0123456789',
        ...portEnv,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    return new Run(child, ports)
  }

  /** Resolves with the first match of `pattern` in the output; rejects after `ms` with the output. */
  async waitFor(pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
    const deadline = Date.now() + ms
    for (;;) {
      const match = this.output.match(pattern)
      if (match) return match
      if (Date.now() > deadline)
        throw new Error(`no ${String(pattern)} within ${ms} ms; output:\n${this.output}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      this.waiters = []
    }
  }

  /** The services' pids from the `[fleet] started order (pid 1), ...` line. */
  async started(ms: number): Promise<Record<string, number>> {
    const [line] = await this.waitFor(/\[fleet\] started .*/, ms)
    const pids: Record<string, number> = {}
    for (const [, name, pid] of line.matchAll(/(\w+) \(pid (\d+)\)/g)) {
      pids[name!] = Number(pid)
      this.pids.add(Number(pid))
    }
    return pids
  }

  ready = async (service: string): Promise<number> =>
    (await fetch(`http://127.0.0.1:${this.ports[service]}/health/ready`).catch(() => undefined))?.status ?? 0

  /** Kills whatever is left (a failed test), so nothing outlives the file. */
  kill(): void {
    for (const pid of [...this.pids, this.child.pid ?? 0])
      if (pid && isAlive(pid)) process.kill(pid, 'SIGKILL')
  }
}

/**
 * Waits until every build of the repository is a cache hit (`turbo run build --dry=json`), so that
 * npm start's own build rewrites nothing: right after a build turbo saves its cache while the tasks
 * after it already run (vercel/turborepo#12178), and a build started then misses the cache and
 * rebuilds the dist/ folders the tests beside this one are reading. `npm test` builds every workspace
 * before the first test starts, so this waits only for those cache writes, not for a build still
 * running beside the tests (a workspace no test depends on, e.g. @saga/peers, was built there and
 * took longer than this wait on a loaded machine).
 */
async function untilBuildsCached(ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  for (;;) {
    const { stdout } = await execFileAsync('npx', ['turbo', 'run', 'build', '--dry=json'], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    })
    type Task = { taskId: string; command: string; cache: { status: string } }
    const tasks = (JSON.parse(stdout) as { tasks: Task[] }).tasks
    // A workspace without the script has nothing to build and is never in the cache.
    const missed = tasks.filter((t) => t.command !== '<NONEXISTENT>' && t.cache.status !== 'HIT')
    if (missed.length === 0) return
    if (Date.now() > deadline)
      throw new Error(`builds not in turbo's cache after ${ms} ms: ${missed.map((t) => t.taskId).join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

beforeAll(() => untilBuildsCached(), 120_000)

const runs: Run[] = []
afterAll(async () => {
  for (const run of runs) run.kill()
  await dropDatabases({ postgresUrl, prefix })
  await deleteBrokerObjects({ prefix, exchanges: [`${prefix}saga.events`] }, amqpUrl)
}, 120_000)

describe('npm start', () => {
  it('when a service is killed after it was ready, then the others keep running and SIGUSR2 restarts it; SIGTERM to npm then drains all four and npm exits 0', async () => {
    const run = await Run.start('npm', ['start', '--', '--prefix', prefix])
    runs.push(run)
    const pids = await run.started(180_000)
    const [ready] = await run.waitFor(/\[fleet\] all services ready.*/, 180_000)
    expect(ready).toContain(`console http://127.0.0.1:${run.ports.console}`)
    expect(await run.ready('console')).toBe(200)

    process.kill(pids.payment!, 'SIGKILL')
    const [, others, startPid] = await run.waitFor(
      /\[fleet\] payment exited \(signal SIGKILL\) after it was ready; (.*) keep running .* Restart it with: kill -USR2 (\d+)/,
      30_000,
    )
    run.pids.add(Number(startPid))
    expect(others).toBe('order, inventory, shipment, console')
    for (const s of ['order', 'inventory', 'shipment']) {
      expect(await run.ready(s)).toBe(200)
      expect(isAlive(pids[s]!)).toBe(true)
    }
    expect(await run.ready('payment')).toBe(0)

    // The hint as printed: SIGUSR2 to start.js (npm's child, `exec`ed by the start script).
    process.kill(Number(startPid), 'SIGUSR2')
    const [, again] = await run.waitFor(/\[fleet\] SIGUSR2: starting payment \(pid (\d+)\) again/, 60_000)
    run.pids.add(Number(again))
    await run.waitFor(/\[fleet\] ready again: payment/, 120_000)
    expect(await run.ready('payment')).toBe(200)

    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(await survivors([Number(startPid), ...run.pids])).toEqual([])
    expect(run.output).toContain(
      '[fleet] SIGTERM: asking order, payment, inventory, shipment, console to drain and exit',
    )
    for (const s of [...SERVICES, 'console']) {
      expect(run.output).toContain(`[fleet] ${s} exited (code 0)`)
      // Each drained: close-with-grace's last line.
      expect(run.output).toMatch(new RegExp(`\\[${s} *\\] \\{.*"msg":"closed"`))
    }
  }, 420_000)

  it('when npm itself dies (SIGKILL), then start.js notices it was orphaned and stops all four', async () => {
    const run = await Run.start('npm', ['start', '--', '--prefix', prefix])
    runs.push(run)
    const pids = await run.started(180_000)
    await run.waitFor(/\[fleet\] all services ready/, 180_000)
    // start.js is npm's child (the start script `exec`s it).
    const { stdout } = await execFileAsync('pgrep', ['-P', String(run.child.pid)])
    const startPid = Number(stdout.trim().split('\n')[0])
    expect(startPid).toBeGreaterThan(0)
    run.pids.add(startPid)
    process.kill(run.child.pid!, 'SIGKILL')
    expect(await survivors([startPid, ...Object.values(pids)], 40_000)).toEqual([])
    expect(run.output).toMatch(/\[fleet\] npm \(pid \d+\) exited: asking .* to drain and exit/)
  }, 300_000)

  it('when start.js gets SIGTERM while the services are still starting, then none is left running and it exits 0', async () => {
    const run = await Run.start(process.execPath, [startJs, '--prefix', prefix])
    runs.push(run)
    const pids = await run.started(120_000)
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(run.output).not.toContain('all services ready')
    expect(run.output).toMatch(/\[fleet\] SIGTERM: asking .* to drain and exit/)
    expect(await survivors(Object.values(pids))).toEqual([])
  }, 180_000)

  it('when a service fails during its start (bad configuration), then the fleet stops with a message naming it and exit code 1', async () => {
    const run = await Run.start(process.execPath, [startJs, '--prefix', prefix], {
      ORDER_DEADLINE_MS: 'soon',
    })
    runs.push(run)
    const pids = await run.started(120_000)
    expect(await run.exited).toBe(1)
    expect(run.output).toMatch(
      /\[fleet\] order exited \(code 1\) before it was ready: a start-up failure .*; stopping the fleet/,
    )
    expect(run.output).toContain('ORDER_DEADLINE_MS')
    expect(run.output).not.toContain('all services ready')
    expect(await survivors(Object.values(pids))).toEqual([])
  }, 180_000)
})
