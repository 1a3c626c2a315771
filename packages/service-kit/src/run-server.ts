import closeWithGrace from 'close-with-grace'
import type { FastifyInstance } from 'fastify'
import { loadConfigOrExit } from './env.js'
import { shutdownTelemetry } from './telemetry/state.js'

/** Options of `runServer`. */
export interface RunServerOptions<C extends { HOST: string; PORT: number; SHUTDOWN_TIMEOUT_MS: number }> {
  /** Used in the messages printed before a logger exists. */
  service: string
  /** Parses the environment; an `EnvError` is printed and the process exits with code 1. */
  loadConfig: () => C
  /** Builds the app (registers everything); awaited before listening. */
  buildApp: (config: C) => Promise<FastifyInstance>
}

/**
 * Hosts a service: parse config (exit 1 naming each bad variable), build the app, install
 * close-with-grace (SIGTERM/SIGINT close the app: stop consuming, drain, close pools; forced exit
 * after SHUTDOWN_TIMEOUT_MS; buffered spans are flushed after the app closed), listen on HOST:PORT. A failing start (e.g. a migration error) is logged
 * and exits with code 1.
 */
export async function runServer<C extends { HOST: string; PORT: number; SHUTDOWN_TIMEOUT_MS: number }>(
  opts: RunServerOptions<C>,
): Promise<FastifyInstance> {
  const config = loadConfigOrExit(opts.service, opts.loadConfig)

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

  closeWithGrace({ delay: config.SHUTDOWN_TIMEOUT_MS, logger: false }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'closing after an unexpected error')
    else app.log.info({ signal }, 'closing')
    await app.close()
    await shutdownTelemetry()
    app.log.info('closed')
  })

  try {
    await app.listen({ host: config.HOST, port: config.PORT })
  } catch (error) {
    app.log.fatal({ err: error }, 'cannot listen')
    await app.close()
    process.exit(1)
  }
  return app
}
