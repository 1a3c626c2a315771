// `npm start [-- --prefix <p>]`: preflight, bootstrap the databases, then run the four services and
// the saga console in one terminal (supervise.ts: signals, start-up failures, crashes, restarts).
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseOptions } from '@saga/cli-kit'
import {
  bootstrapDatabases,
  DEFAULT_AMQP_URL,
  DEFAULT_POSTGRES_URL,
  type ServiceDatabase,
} from './bootstrap.js'
import { localAdminToken } from './admin-token.js'
import { amqpUrlFor, brokerUsers, ensureBrokerUsers, vhostOf } from './broker-users.js'
import { ensureInfrastructure } from './ensure-infra.js'
import { startProgram } from './fleet-cli.js'
import {
  amqpPasswordsFromEnv,
  consoleEnv,
  consolePortOf,
  fleetBrokerNames,
  fleetPorts,
  passwordsFromEnv,
  portOf,
  serviceEnv,
} from './start-env.js'
import { Supervisor, type ServiceSpec } from './supervise.js'
import { exitOnBadUrlSettings } from './url-settings.js'

// --prefix p_: a fleet of its own beside the usual one (databases p_order_service, ..., exchange
// p_saga.events, queues p_order.*, broker users p_order-service, ...); tests run one this way.
// --help, --version and a usage error end the process here, before the settings are read.
const prefix = (await parseOptions(startProgram())).prefix ?? ''
exitOnBadUrlSettings()
try {
  fleetPorts(process.env)
} catch (error) {
  console.error(`npm start: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(2)
}
const root = fileURLToPath(new URL('../../../', import.meta.url))
const postgresUrl = process.env.POSTGRES_URL ?? DEFAULT_POSTGRES_URL
const amqpUrl = process.env.AMQP_URL ?? DEFAULT_AMQP_URL
const colours = { order: 'cyan', payment: 'magenta', inventory: 'yellow', shipment: 'green' } as const
const consoleServer = join(root, 'services', 'console', 'dist', 'server.js')
const say = (line: string) => console.log(`[fleet] ${line}`)

// Set once the services are spawned; the handlers below run before and after that.
const fleet: { supervisor?: Supervisor } = {}
// Installed before anything else, so a stop signal during preflight or bootstrap ends npm start
// (nothing runs yet), and one after the services started reaches each of them exactly once.
// SIGHUP (the terminal closed) is forwarded as SIGTERM: a service run as several processes
// (INSTANCES) drains on SIGTERM and SIGINT only.
const forwarded = { SIGINT: 'SIGINT', SIGTERM: 'SIGTERM', SIGHUP: 'SIGTERM' } as const
for (const [received, signal] of Object.entries(forwarded)) {
  process.on(received, () => {
    if (fleet.supervisor) return fleet.supervisor.stop(signal, received)
    say(`${received} before any service started; exiting`)
    process.exit(0)
  })
}
process.on('SIGUSR2', () => {
  const restarted = fleet.supervisor?.restartExited() ?? []
  say(
    restarted.length > 0
      ? `SIGUSR2: starting ${restarted.map((name) => `${name} (pid ${fleet.supervisor?.pids()[name] ?? '?'})`).join(', ')} again`
      : 'SIGUSR2: no service has exited; nothing to restart',
  )
})
// If npm start itself fails, its services must not run on unsupervised: they drain on SIGTERM.
process.on('exit', () => fleet.supervisor?.abandon())

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
  databases = await bootstrapDatabases({ postgresUrl, prefix, passwords: passwordsFromEnv(process.env) })
} catch (error) {
  console.error(`Cannot create the service databases through ${new URL(postgresUrl).host}: ${String(error)}`)
  console.error('POSTGRES_URL must name a role that may create databases and roles (default: postgres).')
  process.exit(1)
}

// One broker user per service, limited to its own queues and the events exchange (broker-users.ts).
const users = brokerUsers({
  passwords: amqpPasswordsFromEnv(process.env),
  userPrefix: prefix,
  ...(prefix ? fleetBrokerNames(prefix, process.env) : {}),
})
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
const missing = [...servers, consoleServer].filter((file) => !existsSync(file))
if (missing.length > 0) {
  console.error(`Not built: ${missing.join(', ')}\nRun \`npm run build\` first (\`npm start\` does).`)
  process.exit(1)
}

const taken = await takenPorts(databases)
if (taken.length > 0) {
  console.error(
    `Cannot start the fleet: ${taken.join(', ')} in use by another process (another npm start?).\n` +
      'Stop it, or choose other ports with ORDER_PORT, PAYMENT_PORT, INVENTORY_PORT, SHIPMENT_PORT, CONSOLE_PORT.',
  )
  process.exit(1)
}

console.log(`[fleet] databases and roles in place: ${databases.map((db) => db.database).join(', ')}`)

// The credential of admin writes (requeue, discard, retry, the console's actions), for every process.
let env = process.env
try {
  const admin = localAdminToken(root, process.env)
  env = { ...process.env, ADMIN_TOKEN: admin.token }
  say(
    admin.source === 'ADMIN_TOKEN'
      ? 'admin token from ADMIN_TOKEN'
      : `admin token in ${admin.source}${admin.created ? ' (made now)' : ''}: the console's sign-in asks for it`,
  )
} catch (error) {
  console.error(`Cannot start the fleet: ${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
}
const terminal = process.stdout.isTTY

const supervisor = new Supervisor({
  services: databases
    .map((db, i): ServiceSpec => ({
      name: db.service,
      // The OpenTelemetry SDK loads before the app when OTEL_EXPORTER_OTLP_ENDPOINT is set, else nothing.
      command: process.execPath,
      args: ['--import', '@saga/service-kit/telemetry', servers[i]!],
      cwd: join(root, 'services', db.service),
      env: serviceEnv(db, env, amqpUrls.get(db.service) ?? amqpUrl, terminal, prefix),
      readyUrl: `http://127.0.0.1:${portOf(db.service, env)}/health/ready`,
      colour: colours[db.service],
    }))
    .concat({
      name: 'console',
      command: process.execPath,
      args: [consoleServer],
      cwd: join(root, 'services', 'console'),
      env: consoleEnv(env, terminal),
      readyUrl: `http://127.0.0.1:${consolePortOf(env)}/health/ready`,
      colour: 'blue',
    }),
  say,
  write: (line) => void process.stdout.write(`${line}\n`),
  colour: process.stdout.isTTY && !process.env.NO_COLOR,
  restartHint: `kill -USR2 ${process.pid}`,
  // Each service forces its own exit after SHUTDOWN_TIMEOUT_MS; this is the backstop behind it.
  stopTimeoutMs: (Number(process.env.SHUTDOWN_TIMEOUT_MS) || 20_000) + 5_000,
})
fleet.supervisor = supervisor
supervisor.start()
stopWhenNpmDies(supervisor)
process.exit(await supervisor.done)

/**
 * The services' and the console's ports another process already listens on, as `3002 (payment)`.
 * Checked before the start, so that readiness, polled on those ports, can only be the process's own.
 */
async function takenPorts(dbs: ServiceDatabase[]): Promise<string[]> {
  const host = process.env.HOST || '0.0.0.0'
  const taken: string[] = []
  const wanted = new Set(dbs.map((db) => db.service))
  for (const { name, port } of fleetPorts(process.env).filter(
    (p) => p.name === 'console' || wanted.has(p.name),
  )) {
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer()
      server.once('error', () => resolve(false))
      server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)))
    })
    if (!free) taken.push(`port ${port} (${name})`)
  }
  return taken
}

/**
 * Under `npm start` this process's parent is npm. npm dies of signals it does not pass on (SIGUSR2
 * meant for this process but sent to npm's pid, SIGKILL): this process is then reparented, and
 * without this check it and the four services would run on, unsupervised, holding their ports. So a
 * change of parent stops the fleet as SIGTERM does. Only under npm: a fleet started as
 * `node packages/fleet/dist/start.js` by a shell that goes away on purpose (nohup) keeps running.
 * Polled once a second (Node has no parent-death signal); the timer does not keep the process up.
 */
function stopWhenNpmDies(s: Supervisor): void {
  if (process.env.npm_lifecycle_event !== 'start') return
  const parent = process.ppid
  const timer = setInterval(() => {
    if (process.ppid === parent) return
    clearInterval(timer)
    s.stop('SIGTERM', `npm (pid ${parent}) exited`)
  }, 1_000)
  timer.unref()
}
