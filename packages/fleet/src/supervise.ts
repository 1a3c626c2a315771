// The supervisor behind `npm start`: runs the services as child processes with prefixed output,
// forwards stop signals once, and tells a start-up failure from a service that died later.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { styleText } from 'node:util'

/** One service process to run. */
export interface ServiceSpec {
  name: string
  /** Executable and arguments (no shell, so the pid is the service's own). */
  command: string
  args: string[]
  cwd: string
  env: Record<string, string | undefined>
  /** `GET` answering 200 once the service is ready, e.g. `http://127.0.0.1:3002/health/ready`. */
  readyUrl: string
  colour?: 'cyan' | 'magenta' | 'yellow' | 'green' | 'blue' | undefined
}

/** Options of `Supervisor`. */
export interface SupervisorOptions {
  services: ServiceSpec[]
  /** Writes one `[fleet] …` line. */
  say: (line: string) => void
  /** Writes one line of a service's output, already prefixed. */
  write: (line: string) => void
  /** Colour the prefixes (a terminal). */
  colour: boolean
  /** How a person restarts what exited, e.g. `kill -USR2 4242`; printed with every exit. */
  restartHint: string
  /** Services still running this long after a stop signal are killed (ms); above their own SHUTDOWN_TIMEOUT_MS. */
  stopTimeoutMs: number
  /** Said once when a service is not ready after this long (ms); it keeps being polled. Default 60 s. */
  slowStartMs?: number | undefined
  /** Readiness poll interval (ms), default 500. */
  pollMs?: number | undefined
}

/** Where one service is: `starting` until its readiness URL first answers 200. */
type Phase = 'starting' | 'ready' | 'exited'

interface Running {
  spec: ServiceSpec
  child: ChildProcess
  phase: Phase
  /** Was ready once in this fleet: a later exit is a crash, a failed start after it only a failed restart. */
  wasReady: boolean
  /** The signal the supervisor sent it; dying of that signal is a clean stop. */
  sentSignal?: NodeJS.Signals
}

/** `code 1` or `signal SIGKILL`, as a person reads an exit. */
export const describeExit = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal ? `signal ${signal}` : `code ${code ?? '?'}`

/**
 * Runs the fleet's services and decides what an exit means:
 * - Before a service was first ready (its readiness URL answered 200), an exit is a start-up failure
 *   (bad config, failed migration, port taken): the fleet stops with exit code 1, since a partial
 *   fleet would only strand orders.
 * - After it was ready, an exit is reported loudly and the others keep running, without an automatic
 *   restart: this fleet is for watching what happens while a service is away (its messages wait in
 *   its queues, `npm run order -- where` names it, deadlines cancel orders) and an automatic restart
 *   would close that window within a second and hide a service that crashes again at once.
 *   `restartExited()` (SIGUSR2 to `npm start`) brings it back; a restart that fails to start is
 *   reported the same way and stops nothing.
 * - `stop(signal)` forwards the signal once to every running service and resolves `done` when all
 *   have exited: 0 when each ended with code 0 or of the signal it was sent, else 1. Services still
 *   running after `stopTimeoutMs` are killed (SIGKILL).
 * The children get their own process group (`detached`), so a terminal's Ctrl-C reaches them only
 * through `stop`: close-with-grace exits at once, undrained, on a second signal, and the terminal
 * and npm would each deliver one.
 */
export class Supervisor {
  /** Resolves with the exit code once every service has exited after a stop (or all died). */
  readonly done: Promise<number>
  private resolveDone!: (code: number) => void
  private readonly running = new Map<string, Running>()
  private stopping: NodeJS.Signals | undefined
  private stoppedAt = 0
  private failed = false
  private readonly width: number

  constructor(private readonly opts: SupervisorOptions) {
    this.done = new Promise((resolve) => (this.resolveDone = resolve))
    this.width = Math.max(...opts.services.map((s) => s.name.length))
  }

  /** Starts every service; says their pids in one line. */
  start(): void {
    for (const spec of this.opts.services) this.launch(spec, false)
    const pids = [...this.running.values()].map((r) => `${r.spec.name} (pid ${r.child.pid ?? '?'})`)
    this.opts.say(`started ${pids.join(', ')}`)
    void this.announceReady()
  }

  /** The services' pids by name (those that have one), for messages and tests. */
  pids(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const [name, r] of this.running) if (r.child.pid !== undefined) out[name] = r.child.pid
    return out
  }

  /**
   * Forwards `signal` to every service still running and waits (see `done`). Idempotent: a second
   * call (Ctrl-C reaches `npm start` from the terminal and again from npm) only says who is left.
   */
  stop(signal: NodeJS.Signals, why = signal as string): void {
    if (this.stopping) {
      // One Ctrl-C arrives twice (terminal and npm); only a later one is worth a line.
      if (Date.now() - this.stoppedAt > 1_000)
        this.opts.say(`still stopping; waiting for ${this.alive().join(', ')}`)
      return
    }
    this.stopping = signal
    this.stoppedAt = Date.now()
    const alive = [...this.running.values()].filter((r) => isAlive(r.child))
    if (alive.length === 0) return this.finish()
    this.opts.say(`${why}: asking ${alive.map((r) => r.spec.name).join(', ')} to drain and exit`)
    for (const r of alive) {
      r.sentSignal = signal
      r.child.kill(signal)
    }
    const force = setTimeout(() => {
      const left = [...this.running.values()].filter((r) => isAlive(r.child))
      if (left.length === 0) return
      this.opts.say(
        `${left.map((r) => r.spec.name).join(', ')} still running ${this.opts.stopTimeoutMs} ms after ${signal}; killing`,
      )
      this.failed = true
      for (const r of left) r.child.kill('SIGKILL')
    }, this.opts.stopTimeoutMs)
    force.unref()
  }

  /** Starts again every service that exited after it was ready; returns their names. */
  restartExited(): string[] {
    if (this.stopping) return []
    const exited = [...this.running.values()].filter((r) => r.phase === 'exited')
    for (const r of exited) this.launch(r.spec, true)
    if (exited.length > 0) void this.announceReady()
    return exited.map((r) => r.spec.name)
  }

  /**
   * Sends SIGTERM to every service still running, without waiting: for `npm start` exiting for any
   * other reason (an exception), so no service runs on unsupervised. Synchronous (an `exit` handler).
   */
  abandon(): void {
    for (const r of this.running.values()) if (isAlive(r.child)) r.child.kill('SIGTERM')
  }

  private alive(): string[] {
    return [...this.running.values()].filter((r) => isAlive(r.child)).map((r) => r.spec.name)
  }

  private launch(spec: ServiceSpec, wasReady: boolean): void {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      // service-kit's runServer stops the child when this process is gone (SUPERVISOR_PID_VARIABLE).
      env: { ...spec.env, SAGA_SUPERVISOR_PID: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const r: Running = { spec, child, phase: 'starting', wasReady }
    this.running.set(spec.name, r)
    const label = spec.name.padEnd(this.width)
    const prefix = `[${this.opts.colour && spec.colour ? styleText(spec.colour, label) : label}]`
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) =>
        this.opts.write(`${prefix} ${line}`),
      )
    }
    child.on('error', (error) => this.opts.say(`${spec.name} could not be started: ${error.message}`))
    child.on('exit', (code, signal) => this.exited(r, code, signal))
  }

  private exited(r: Running, code: number | null, signal: NodeJS.Signals | null): void {
    const was = r.phase
    r.phase = 'exited'
    const how = describeExit(code, signal)
    const name = r.spec.name
    if (this.stopping) {
      const clean = code === 0 || (signal !== null && signal === r.sentSignal)
      if (!clean) this.failed = true
      this.opts.say(`${name} exited (${how})`)
      if (this.alive().length === 0) this.finish()
      return
    }
    const others = this.alive()
    if (was === 'starting' && !r.wasReady) {
      this.opts.say(
        this.loud(
          `${name} exited (${how}) before it was ready: a start-up failure (its lines above say why: ` +
            `configuration, migration, port); stopping the fleet`,
        ),
      )
      this.failed = true
      this.stop('SIGTERM', 'start-up failure')
      return
    }
    const when = was === 'starting' ? 'while restarting, before it was ready' : 'after it was ready'
    if (others.length === 0) {
      this.opts.say(
        this.loud(`${name} exited (${how}) ${when}; no service is left running, so the fleet stops`),
      )
      this.failed = true
      this.finish()
      return
    }
    this.opts.say(
      this.loud(
        `${name} exited (${how}) ${when}; ${others.join(', ')} ${others.length === 1 ? 'keeps' : 'keep'} running (its messages wait in its ` +
          `queues until it is back). Restart it with: ${this.opts.restartHint}`,
      ),
    )
  }

  private loud(line: string): string {
    return this.opts.colour ? styleText(['bold', 'red'], line) : line
  }

  private finish(): void {
    this.resolveDone(this.failed ? 1 : 0)
  }

  /** Polls every starting service's readiness URL until it answers 200; says who became ready. */
  private async announceReady(): Promise<void> {
    const pollMs = this.opts.pollMs ?? 500
    const slowAt = Date.now() + (this.opts.slowStartMs ?? 60_000)
    let saidSlow = false
    const starting = () => [...this.running.values()].filter((r) => r.phase === 'starting')
    const first = [...this.running.values()].every((r) => !r.wasReady)
    const readyNow: string[] = []
    while (!this.stopping && starting().length > 0) {
      for (const r of starting()) {
        const ok = await fetch(r.spec.readyUrl, { signal: AbortSignal.timeout(1_000) })
          .then((res) => res.ok)
          .catch(() => false)
        // Re-read: it may have exited while the request was out.
        if (ok && r.phase === 'starting' && isAlive(r.child)) {
          r.phase = 'ready'
          r.wasReady = true
          readyNow.push(`${r.spec.name} ${new URL(r.spec.readyUrl).origin}`)
        }
      }
      if (!saidSlow && Date.now() > slowAt && starting().length > 0) {
        saidSlow = true
        this.opts.say(
          `not ready after ${Math.round((this.opts.slowStartMs ?? 60_000) / 1000)} s: ${starting()
            .map((r) => r.spec.name)
            .join(', ')}; see their lines above`,
        )
      }
      if (starting().length > 0) await new Promise((resolve) => setTimeout(resolve, pollMs))
    }
    if (this.stopping || readyNow.length === 0) return
    if (first) this.opts.say(`all services ready: ${readyNow.join(', ')} (Ctrl-C stops them)`)
    else this.opts.say(`ready again: ${readyNow.join(', ')}`)
  }
}

const isAlive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null
