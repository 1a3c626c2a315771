import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type RequestListener } from 'node:http'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The built order CLI (packages/fleet/dist/cli/order.js). */
export const orderCliEntry = fileURLToPath(new URL('../dist/cli/order.js', import.meta.url))

/** What a finished command printed, and its exit code. */
export interface Ran {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs a built entry point with `node`; resolves with its exit code and output whatever the code.
 * `timeoutMs` (default 30 s) only ends a hung command: it is far above what the command takes on a
 * loaded machine.
 */
export async function runNode(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Ran> {
  return run(process.execPath, [entry, ...args], {
    env: { ...process.env, ...env },
    timeout: timeoutMs,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )
}

/** A local HTTP server answering with `handler`; `close()` stops it. */
export async function serve(handler: RequestListener) {
  const server = createServer(handler).listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/** A URL nothing listens on (a port just released). */
export async function closedUrl(): Promise<string> {
  const server = await serve(() => undefined)
  await server.close()
  return server.url
}
