import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
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

/**
 * One service instance as an OS process: `node services/<service>/dist/server.js` with its own env,
 * stdout and stderr appended to `logFile`. Can be killed with SIGKILL and started again with the
 * same (or changed) env.
 */
export class ServiceProcess {
  private child: ChildProcess | undefined
  private exited: Promise<number | null> = Promise.resolve(null)
  /** How many times this instance was started. */
  starts = 0

  constructor(
    readonly service: ServiceName,
    /** e.g. `order#1`. */
    readonly name: string,
    readonly port: number,
    public env: Record<string, string>,
    readonly logFile: string,
  ) {}

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
    const entry = path.join(repoRoot, 'services', this.service, 'dist', 'server.js')
    if (!fs.existsSync(entry))
      throw new Error(`${entry} is missing: build the services first (npx turbo run build)`)
    const log = fs.openSync(this.logFile, 'a')
    fs.writeSync(log, `\n----- ${new Date().toISOString()} start #${this.starts + 1} of ${this.name} -----\n`)
    const child = spawn(process.execPath, [entry], {
      cwd: path.join(repoRoot, 'services', this.service),
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
   * exits, pointing at the log file.
   */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    let exited = false
    void this.exited.then(() => (exited = true))
    await eventually(
      `${this.name} ready at ${this.url}/health/ready (log: ${this.logFile})`,
      async () => {
        if (exited) throw new Error(`${this.name} exited before ready; see ${this.logFile}`)
        const res = await fetch(`${this.url}/health/ready`, { signal: AbortSignal.timeout(2_000) })
        await res.body?.cancel()
        return res.status === 200
      },
      { timeoutMs, intervalMs: 100 },
    ).catch((error: unknown) => {
      if (exited) throw new Error(`${this.name} exited before ready; see ${this.logFile}`)
      throw error
    })
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
