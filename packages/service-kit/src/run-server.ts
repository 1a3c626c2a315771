import cluster from 'node:cluster'
import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { runPrimary, SHUTDOWN_MESSAGE } from './cluster.js'
import { loadConfigOrExit } from './env.js'
import { shutdownTelemetry } from './telemetry/state.js'

/** What `runServer` reads from a service's config. */
export interface ServerConfig {
  HOST: string
  PORT: number
  SHUTDOWN_TIMEOUT_MS: number
  /** Processes to run (node:cluster, one shared port); 1 or absent = this process alone. */
  INSTANCES?: number | undefined
}

/** Options of `runServer`. */
export interface RunServerOptions<C extends ServerConfig> {
  /** Used in the messages printed before a logger exists. */
  service: string
  /** Parses the environment; an `EnvError` is printed and the process exits with code 1. */
  loadConfig: () => C
  /** Builds the app (registers everything); awaited before listening. */
  buildApp: (config: C) => Promise<FastifyInstance>
}

/** The variable `npm start`'s supervisor sets to its pid in each process it runs. */
export const SUPERVISOR_PID_VARIABLE = 'SAGA_SUPERVISOR_PID'

/**
 * Under a supervisor (`SAGA_SUPERVISOR_PID` set to its pid, the parent), stops this process as
 * SIGTERM does once the parent is another (the supervisor was killed, `kill -9` included, and the
 * process was handed to init): nobody would read its logs, restart it or stop it, and its ports
 * would hold up the next `npm start`. Checked once a second, as the supervisor checks npm. The
 * drain is SIGTERM's; the exit itself is SIGKILL (see below), so the exit code is 137.
 */
function stopWhenSupervisorDies(): void {
  const supervisor = Number(process.env[SUPERVISOR_PID_VARIABLE])
  if (!Number.isInteger(supervisor) || supervisor <= 0 || process.ppid !== supervisor) return
  const timer = setInterval(() => {
    if (process.ppid === supervisor) return
    clearInterval(timer)
    // stdout and stderr were pipes to the supervisor and are broken now. pino flushes what it still
    // holds at exit and retries a broken pipe forever (sonic-boom's flushSync), so once the drain is
    // done the process ends before that flush: nobody is left to read the lines or the exit code.
    process.prependListener('exit', () => process.kill(process.pid, 'SIGKILL'))
    process.kill(process.pid, 'SIGTERM')
  }, 1_000)
  timer.unref()
}

/**
 * Hosts a service: parse config (exit 1 naming each bad variable), build the app, install
 * close-with-grace (SIGTERM/SIGINT close the app: stop consuming, drain, close pools; forced exit
 * after SHUTDOWN_TIMEOUT_MS; buffered spans are flushed after the app closed), listen on HOST:PORT. A failing start (e.g. a migration error) is logged
 * and exits with code 1. With `INSTANCES` > 1 this process becomes a node:cluster primary that runs
 * that many copies of the service sharing HOST:PORT (`runPrimary`) and resolves to undefined once
 * they have all exited; each copy is a worker that runs the steps above. Under `npm start`'s
 * supervisor it stops when the supervisor is gone (`stopWhenSupervisorDies`).
 */
export async function runServer<C extends ServerConfig>(
  opts: RunServerOptions<C>,
): Promise<FastifyInstance | undefined> {
  const config = loadConfigOrExit(opts.service, opts.loadConfig)
  if (!cluster.isWorker) stopWhenSupervisorDies()
  const instances = config.INSTANCES ?? 1
  if (instances > 1 && cluster.isPrimary) {
    await runPrimary({ service: opts.service, instances, shutdownTimeoutMs: config.SHUTDOWN_TIMEOUT_MS })
    return undefined
  }

  let app: FastifyInstance
  try {
    app = await opts.buildApp(config)
    await app.ready()
  } catch (error) {
    // Pools or connections opened before the failure would keep the process alive: exit outright.
    process.stderr.write(
      `${opts.service}: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
    )
    process.exit(1)
  }

  // A worker closes when its primary asks (below), not on the signals: they reach it too (Ctrl-C
  // goes to the whole process group) and close-with-grace exits at once on a second one.
  const skip: ('SIGINT' | 'SIGTERM')[] = cluster.isWorker ? ['SIGINT', 'SIGTERM'] : []
  const grace = closeWithGrace(
    { delay: config.SHUTDOWN_TIMEOUT_MS, logger: false, skip },
    async ({ signal, err, manual }) => {
      if (err) app.log.error({ err }, 'closing after an unexpected error')
      else app.log.info({ signal: signal ?? (manual ? 'primary' : undefined) }, 'closing')
      await app.close()
      await shutdownTelemetry()
      app.log.info('closed')
    },
  )
  if (cluster.isWorker) {
    const ignore = () => undefined
    process.on('SIGINT', ignore)
    process.on('SIGTERM', ignore)
    process.on('message', (message) => {
      if (message === SHUTDOWN_MESSAGE) grace.close()
    })
    // The primary is gone (killed): nobody hands this worker connections any more.
    process.on('disconnect', () => {
      grace.close()
    })
  }

  try {
    await app.listen({ host: config.HOST, port: config.PORT })
  } catch (error) {
    app.log.fatal({ err: error }, 'cannot listen')
    await app.close()
    process.exit(1)
  }
  return app
}
