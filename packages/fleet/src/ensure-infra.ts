import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { formatPreflightFailures, preflight, type PreflightResult } from './preflight.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))

/** The one command that installs, configures and starts both servers (Debian/Ubuntu, as root). */
export const INSTALL_COMMAND = 'sudo bash infra/local/setup-servers.sh'

/** Options of `ensureInfrastructure`. */
export interface EnsureOptions {
  postgresUrl: string
  amqpUrl: string
  /** Progress lines ("starting RabbitMQ"); default console.log. */
  say?: ((line: string) => void) | undefined
  /** How long a started server may take to answer, ms (default 60,000: RabbitMQ boots in ~10 s). */
  startTimeoutMs?: number | undefined
}

/** What `ensureInfrastructure` found: both reachable, or the message to print instead. */
export type EnsureResult = { ok: true } | { ok: false; message: string }

const onPath = (command: string) =>
  (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, command)))
const isLoopback = (address: string) => /^(127\.|localhost:|\[::1\]:|::1:)/.test(address)

/** Debian's clusters (pg_lsclusters: version, name, port, status) listening on `port`. */
async function postgresClusters(port: string): Promise<Array<{ version: string; name: string }>> {
  if (!onPath('pg_lsclusters')) return []
  const { stdout } = await run('pg_lsclusters', ['-h'])
  return stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, , p]) => p === port)
    .map(([version, name]) => ({ version: version!, name: name! }))
}

/** Starts an installed, stopped server on this machine; false when none is installed here. */
async function startInstalled(dep: PreflightResult, say: (line: string) => void): Promise<boolean> {
  if (dep.name === 'PostgreSQL') {
    const clusters = await postgresClusters(dep.address.slice(dep.address.lastIndexOf(':') + 1))
    for (const { version, name } of clusters) {
      say(`starting PostgreSQL ${version}/${name} (pg_ctlcluster)`)
      await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, 'start']).catch(
        (error: Error) => say(`  pg_ctlcluster: ${error.message.trim()}`),
      )
    }
    return clusters.length > 0
  }
  if (!onPath('rabbitmq-server')) return false
  say('starting RabbitMQ (rabbitmq-server -detached)')
  await run('rabbitmq-server', ['-detached']).catch((error: Error) => say(`  ${error.message.trim()}`))
  return true
}

/** Brings the compose file's local-infra services up for the missing servers (Docker only). */
async function startFromCompose(missing: PreflightResult[], say: (line: string) => void): Promise<boolean> {
  if (!onPath('docker')) return false
  const services = missing.map((d) => (d.name === 'PostgreSQL' ? 'postgres-local' : 'rabbitmq-local'))
  say(`starting ${services.join(', ')} from docker-compose.yml (profile local-infra)`)
  await run('docker', ['compose', '--profile', 'local-infra', 'up', '-d', '--wait', ...services], {
    cwd: root,
    timeout: 180_000,
  }).catch((error: Error) => say(`  docker compose: ${error.message.trim()}`))
  return true
}

async function reachableWithin(opts: EnsureOptions, ms: number): Promise<PreflightResult[]> {
  const deadline = Date.now() + ms
  for (;;) {
    const results = await preflight(opts)
    if (results.every((r) => r.ok) || Date.now() > deadline) return results
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

/**
 * Makes sure PostgreSQL and RabbitMQ answer before `npm start` or `npm test` go on. A server that
 * does not answer on a loopback address is started when it is installed here (Debian's
 * pg_ctlcluster, rabbitmq-server -detached); otherwise, with Docker present, from docker-compose.yml's
 * `local-infra` services. A remote address is never touched. When one still does not answer, the
 * result carries the preflight message and the one command that installs both (`INSTALL_COMMAND`).
 */
export async function ensureInfrastructure(opts: EnsureOptions): Promise<EnsureResult> {
  const say = opts.say ?? ((line: string) => console.log(line))
  let results = await preflight(opts)
  const missing = results.filter((r) => !r.ok && isLoopback(r.address))
  if (missing.length > 0) {
    const started = await Promise.all(missing.map((dep) => startInstalled(dep, say)))
    const notInstalled = missing.filter((_, i) => !started[i])
    const composed = notInstalled.length > 0 && (await startFromCompose(notInstalled, say))
    if (started.some(Boolean) || composed)
      results = await reachableWithin(opts, opts.startTimeoutMs ?? 60_000)
  }
  if (results.every((r) => r.ok)) return { ok: true }
  return {
    ok: false,
    message:
      `${formatPreflightFailures(results)}\n\n` +
      `Not installed here? One command installs, configures and starts both (Debian/Ubuntu):\n` +
      `    ${INSTALL_COMMAND}\n` +
      `or, with Docker: docker compose --profile local-infra up -d --wait postgres-local rabbitmq-local`,
  }
}
