import type { AddressInfo } from 'node:net'
import { buildApp, type BuildAppOptions } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'

/** A console listening on an ephemeral port of 127.0.0.1. */
export interface RunningConsole {
  url: string
  /** How many TCP connections the console has open now. */
  connections(): Promise<number>
  close(): Promise<void>
}

/** Builds the console from `env` (plus a silent log) and listens; `close` stops it. */
export async function startConsole(
  env: Record<string, string>,
  options: BuildAppOptions = {},
): Promise<RunningConsole> {
  const config = loadConfig({ LOG_LEVEL: 'silent', CONSOLE_PORT: '0', ...env })
  const app = await buildApp(config, { logger: false, ...options })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () =>
      new Promise((resolve, reject) =>
        app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
      ),
    close: () => app.close(),
  }
}
