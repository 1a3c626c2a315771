import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Fleet } from './fleet.js'
import { repoRoot } from './service-process.js'

const run = promisify(execFile)

/**
 * Runs the order CLI (packages/fleet/dist/cli/order.js) against this run's fleet and returns its
 * output; a non-zero exit rejects with the output in the message.
 */
export async function orderCli(fleet: Fleet, args: string[], timeoutMs = 30_000): Promise<string> {
  const entry = path.join(repoRoot, 'packages', 'fleet', 'dist', 'cli', 'order.js')
  try {
    const { stdout, stderr } = await run(process.execPath, [entry, ...args], {
      env: fleet.cliEnv(),
      timeout: timeoutMs,
    })
    return stdout + stderr
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; code?: number; message: string }
    throw new Error(
      `order ${args.join(' ')} failed (${e.code ?? e.message}):\n${e.stdout ?? ''}${e.stderr ?? ''}`,
      { cause: error },
    )
  }
}
