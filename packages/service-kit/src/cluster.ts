import cluster, { type Worker } from 'node:cluster'

/** Options of `runPrimary`. */
export interface PrimaryOptions {
  /** Used in the lines the primary prints (it has no logger). */
  service: string
  /** Worker processes to keep running (INSTANCES). */
  instances: number
  /** After SIGTERM/SIGINT, workers still running after this long are killed (ms). */
  shutdownTimeoutMs: number
}

/** The IPC message by which the primary asks a worker to drain and exit. */
export const SHUTDOWN_MESSAGE = 'saga:shutdown'

/** A worker that dies within this long of its start is not restarted (a bad start would only loop). */
const MIN_UPTIME_MS = 10_000

/**
 * The primary of a service run as several processes (node:cluster): forks `instances` workers of the
 * same entry point with the same environment; they share the HTTP port (the primary accepts and hands
 * connections round-robin) and each runs the whole service: its own pool, relay and consumers (the
 * relay's row locks and the inbox make that safe, docs/architecture.md). The primary itself opens no
 * database or broker connection. A worker that exits on its own after running at least 10 s is
 * replaced; one that dies sooner (a failed start) stops the service with exit code 1. On SIGTERM or
 * SIGINT the primary asks every worker over IPC (`SHUTDOWN_MESSAGE`) to drain and close as a single
 * process does (workers ignore the signals themselves: Ctrl-C and tree kills reach them too, and a
 * second signal would cut their drain short); workers still running after `shutdownTimeoutMs` are
 * killed. Resolves when every worker has exited.
 */
export function runPrimary(opts: PrimaryOptions): Promise<void> {
  const say = (line: string) => process.stderr.write(`${opts.service}: ${line}\n`)
  const started = new Map<Worker, number>()
  let stopping = false
  let failed = false

  const fork = () => {
    const worker = cluster.fork()
    started.set(worker, Date.now())
  }

  return new Promise<void>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      const uptime = Date.now() - (started.get(worker) ?? 0)
      started.delete(worker)
      if (!stopping) {
        if (uptime >= MIN_UPTIME_MS) {
          say(`worker ${worker.process.pid} exited (${signal ?? code}) after ${uptime} ms; starting another`)
          fork()
        } else {
          say(
            `worker ${worker.process.pid} exited (${signal ?? code}) ${uptime} ms after its start; stopping`,
          )
          failed = true
          stop('SIGTERM')
        }
      }
      if (started.size === 0 && stopping) {
        if (failed) process.exitCode = 1
        resolve()
      }
    })

    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return
      stopping = true
      say(`${signal}: asking ${started.size} processes to drain and exit`)
      for (const worker of started.keys()) worker.send(SHUTDOWN_MESSAGE)
      const force = setTimeout(() => {
        for (const worker of started.keys()) worker.process.kill('SIGKILL')
      }, opts.shutdownTimeoutMs)
      force.unref()
      if (started.size === 0) resolve()
    }
    process.on('SIGTERM', () => stop('SIGTERM'))
    process.on('SIGINT', () => stop('SIGINT'))

    say(`starting ${opts.instances} processes sharing one port (INSTANCES=${opts.instances})`)
    for (let i = 0; i < opts.instances; i += 1) fork()
  })
}
