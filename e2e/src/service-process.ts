import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@saga/testkit'
import type { ServiceName } from './run.js'
import { eventually } from './wait.js'

/** The repository root (e2e/src/ -> ../..). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const live = new Set<ChildProcess>()
// A test runner that dies (or a failing hook that never reaches teardown) must not leave services
// running against dropped databases: kill every child synchronously on exit.
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/** How many times `waitReady` moves an instance to another port after EADDRINUSE. */
const MAX_REBINDS = 5

/** What a `ServiceProcess` runs: one of the saga's services, or the saga console. */
export type ProcessKind = ServiceName | 'console'

/**
 * One service instance as an OS process: `node services/<service>/dist/server.js` under `root` (this
 * checkout, or a built copy of another release: see `releaseBuild`) with its own env, stdout and
 * stderr appended to `logFile`. Can be killed with SIGKILL and started again with the
 * same (or changed) env.
 *
 * Its port is chosen free (`freePort`) before the process binds it, so another process may take it
 * in between: `waitReady` then sees the instance exit with EADDRINUSE in its log, and starts it again
 * on a newly chosen port (`port`, `url` and `env.PORT` follow).
 */
export class ServiceProcess<Kind extends ProcessKind = ServiceName> {
  private child: ChildProcess | undefined
  private exited: Promise<number | null> = Promise.resolve(null)
  private currentPort: number
  /** Where this start's output begins in `logFile` (bytes). */
  private logOffset = 0
  /** How many times this instance was started. */
  starts = 0

  constructor(
    readonly service: Kind,
    /** e.g. `order#1`. */
    readonly name: string,
    port: number,
    public env: Record<string, string>,
    readonly logFile: string,
    /** The checkout whose build runs: this repository by default. */
    readonly root: string = repoRoot,
  ) {
    this.currentPort = port
  }

  /** The HTTP port the instance listens on (changes only when `waitReady` moved it, see above). */
  get port(): number {
    return this.currentPort
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Spawns the process (does not wait for readiness; see `waitReady`). */
  start(envOverrides: Record<string, string> = {}): void {
    if (this.running) throw new Error(`${this.name} is already running (pid ${this.pid})`)
    this.env = { ...this.env, ...envOverrides }
    const entry = path.join(this.root, 'services', this.service, 'dist', 'server.js')
    if (!fs.existsSync(entry))
      throw new Error(`${entry} is missing: build the services first (npx turbo run build)`)
    const log = fs.openSync(this.logFile, 'a')
    this.logOffset = fs.fstatSync(log).size
    fs.writeSync(log, `\n----- ${new Date().toISOString()} start #${this.starts + 1} of ${this.name} -----\n`)
    const child = spawn(process.execPath, [entry], {
      cwd: path.join(this.root, 'services', this.service),
      env: this.env,
      stdio: ['ignore', log, log],
    })
    fs.closeSync(log)
    this.starts += 1
    this.child = child
    live.add(child)
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        live.delete(child)
        resolve(code)
      })
    })
  }

  /**
   * Polls GET /health/ready until 200; rejects after `timeoutMs` or at once when the process
   * exits, pointing at the log file. An instance that exited because its port was taken
   * (EADDRINUSE) is started again on another free port, up to MAX_REBINDS times.
   */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    for (let rebinds = 0; ; rebinds++) {
      try {
        await this.waitReadyOnce(timeoutMs)
        return
      } catch (error) {
        if (this.running || rebinds >= MAX_REBINDS || !this.logSinceStart().includes('EADDRINUSE'))
          throw error
        this.currentPort = await freePort()
        this.start({ [this.service === 'console' ? 'CONSOLE_PORT' : 'PORT']: String(this.currentPort) })
      }
    }
  }

  /** What the current start wrote to the log so far. */
  private logSinceStart(): string {
    try {
      const log = fs.readFileSync(this.logFile)
      return log.subarray(this.logOffset).toString('utf8')
    } catch {
      return ''
    }
  }

  private async waitReadyOnce(timeoutMs: number): Promise<void> {
    let exited = false
    void this.exited.then(() => (exited = true))
    const exitedError = () => new Error(`${this.name} exited before ready; see ${this.logFile}`)
    // An exit ends the wait at once ('exited' stops the polling); a throw would only count as "not yet".
    const outcome = await eventually(
      `${this.name} ready at ${this.url}/health/ready (log: ${this.logFile})`,
      async () => {
        if (exited) return 'exited'
        const res = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(2_000) })
        await res.body?.cancel()
        return res.status === 200 && 'ready'
      },
      { timeoutMs, intervalMs: 100 },
    ).catch((error: unknown) => {
      if (exited) throw exitedError()
      throw error
    })
    if (outcome === 'exited') throw exitedError()
  }

  /** kill -9: no shutdown hooks, no flushing; resolves when the OS reaped it. */
  async kill(): Promise<void> {
    if (!this.running) return
    this.child?.kill('SIGKILL')
    await this.exited
  }

  /** Graceful stop (SIGTERM), then SIGKILL if still alive after `graceMs`. */
  async stop(graceMs = 8_000): Promise<void> {
    if (!this.running) return
    this.child?.kill('SIGTERM')
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs)
    await this.exited
    clearTimeout(timer)
  }

  /** Starts again (optionally with changed env) and waits until ready. */
  async restart(envOverrides: Record<string, string> = {}, timeoutMs = 90_000): Promise<void> {
    await this.stop()
    this.start(envOverrides)
    await this.waitReady(timeoutMs)
  }

  /** The last `lines` lines of the log, for failure messages. */
  tail(lines = 30): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n')
    } catch {
      return ''
    }
  }
}
