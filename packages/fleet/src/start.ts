// `npm start`: preflight, bootstrap the databases, then run the four services in one terminal.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import concurrently from 'concurrently'
import { bootstrapDatabases, DEFAULT_POSTGRES_URL, type ServiceDatabase } from './bootstrap.js'
import { amqpUrlFor, brokerUsers, ensureBrokerUsers, vhostOf } from './broker-users.js'
import { ensureInfrastructure } from './ensure-infra.js'
import { amqpPasswordsFromEnv, passwordsFromEnv, portOf, serviceEnv } from './start-env.js'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const colours = { order: 'cyan', payment: 'magenta', inventory: 'yellow', shipment: 'green' } as const

// Starts an installed but stopped local PostgreSQL or RabbitMQ, or says how to install them.
const infra = await ensureInfrastructure({
  postgresUrl,
  amqpUrl,
  say: (line) => console.log(`[fleet] ${line}`),
})
if (!infra.ok) {
  console.error(`Cannot start the fleet.\n\n${infra.message}`)
  process.exit(1)
}

let databases: ServiceDatabase[]
try {
  databases = await bootstrapDatabases({ postgresUrl, passwords: passwordsFromEnv(process.env) })
} catch (error) {
  console.error(`Cannot create the service databases through ${new URL(postgresUrl).host}: ${String(error)}`)
  console.error('POSTGRES_URL must name a role that may create databases and roles (default: postgres).')
  process.exit(1)
}

// One broker user per service, limited to its own queues and the events exchange (broker-users.ts).
const users = brokerUsers({ passwords: amqpPasswordsFromEnv(process.env) })
const amqpUrls = new Map<string, string>()
try {
  await ensureBrokerUsers(users, vhostOf(amqpUrl))
  for (const u of users) amqpUrls.set(u.service, amqpUrlFor(u, amqpUrl))
  console.log(`[fleet] broker users in place: ${users.map((u) => u.user).join(', ')}`)
} catch (error) {
  console.warn(
    `[fleet] cannot create the per-service broker users (${error instanceof Error ? error.message : String(error)});\n` +
      `[fleet] every service uses AMQP_URL's user instead. Run npm start as a user that may run rabbitmqctl.`,
  )
}

const servers = databases.map((db) => join(root, 'services', db.service, 'dist', 'server.js'))
const missing = servers.filter((file) => !existsSync(file))
if (missing.length > 0) {
  console.error(`Not built: ${missing.join(', ')}\nRun \`npm run build\` first (\`npm start\` does).`)
  process.exit(1)
}

const { result } = concurrently(
  databases.map((db, i) => ({
    name: db.service,
    // The OpenTelemetry SDK loads before the app when OTEL_EXPORTER_OTLP_ENDPOINT is set, else nothing.
    command: `node --import @saga/service-kit/telemetry ${JSON.stringify(servers[i])}`,
    cwd: join(root, 'services', db.service),
    env: serviceEnv(db, process.env, amqpUrls.get(db.service) ?? amqpUrl, process.stdout.isTTY),
    prefixColor: colours[db.service],
  })),
  // One service failing to start (bad config, failed migration) stops the rest: a partial fleet
  // would only strand orders. Ctrl-C is forwarded to every service, which drains and exits.
  { prefix: 'name', padPrefix: true, killOthersOn: ['failure'], killSignal: 'SIGTERM', handleInput: false },
)

console.log(`[fleet] databases and roles in place: ${databases.map((db) => db.database).join(', ')}`)

// Set when every service has exited, so the readiness poll does not keep `npm start` alive.
const fleetEnded = new AbortController()
void announceWhenReady(databases, fleetEnded.signal)

try {
  await result
} catch {
  process.exitCode = 1
} finally {
  fleetEnded.abort()
}

/**
 * Prints one line once every service answers /health/ready with 200 (or says which did not in
 * 60 s). Gives up at once, silently, when `ended` aborts: the services have exited.
 */
async function announceWhenReady(dbs: ServiceDatabase[], ended: AbortSignal): Promise<void> {
  const deadline = Date.now() + 60_000
  const pending = new Map(
    dbs.map((db) => [db.service, `http://127.0.0.1:${portOf(db.service, process.env)}`]),
  )
  const ready: string[] = []
  while (pending.size > 0 && Date.now() < deadline && !ended.aborted) {
    for (const [service, base] of pending) {
      const ok = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(1_000) })
        .then((r) => r.ok)
        .catch(() => false)
      if (ok) {
        ready.push(`${service} ${base}`)
        pending.delete(service)
      }
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 500))
  }
  if (ended.aborted) return
  if (pending.size === 0) console.log(`[fleet] all services ready: ${ready.join(', ')} (Ctrl-C stops them)`)
  else console.log(`[fleet] not ready after 60 s: ${[...pending.keys()].join(', ')}; see their logs above`)
}
