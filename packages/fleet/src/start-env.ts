import { SERVICES, type ServiceDatabase, type ServiceName } from './bootstrap.js'

/** Environment as read from `process.env`. */
export type Env = Record<string, string | undefined>

/** `<SERVICE>_DB_PASSWORD` (e.g. ORDER_DB_PASSWORD) overrides a role's local default password. */
export function passwordsFromEnv(env: Env): Partial<Record<ServiceName, string>> {
  return Object.fromEntries(
    SERVICES.flatMap((s) => {
      const value = env[`${s.toUpperCase()}_DB_PASSWORD`]
      return value ? [[s, value]] : []
    }),
  )
}

/** `<SERVICE>_AMQP_PASSWORD` (e.g. ORDER_AMQP_PASSWORD) overrides a broker user's local default password. */
export function amqpPasswordsFromEnv(env: Env): Partial<Record<ServiceName, string>> {
  return Object.fromEntries(
    SERVICES.flatMap((s) => {
      const value = env[`${s.toUpperCase()}_AMQP_PASSWORD`]
      return value ? [[s, value]] : []
    }),
  )
}

/** Default HTTP port per service; `<SERVICE>_PORT` (e.g. ORDER_PORT) overrides it under `npm start`. */
export const DEFAULT_PORTS: Record<ServiceName, number> = {
  order: 3001,
  payment: 3002,
  inventory: 3003,
  shipment: 3004,
}

/** The console's default HTTP port; CONSOLE_PORT overrides it. */
export const DEFAULT_CONSOLE_PORT = 3005

/**
 * A service's port under `npm start`: `<SERVICE>_PORT` or `DEFAULT_PORTS`.
 * @throws Error when the setting is not a TCP port (1-65535)
 */
export function portOf(service: ServiceName, env: Env): number {
  return portSetting(`${service.toUpperCase()}_PORT`, DEFAULT_PORTS[service], env)
}

/** The console's port under `npm start`: CONSOLE_PORT or 3005. @throws Error when not a TCP port */
export function consolePortOf(env: Env): number {
  return portSetting('CONSOLE_PORT', DEFAULT_CONSOLE_PORT, env)
}

/**
 * The five ports of `npm start`, the four services' and the console's, checked together before
 * anything starts.
 * @throws Error naming a variable that is not a TCP port, or two that name the same port
 */
export function fleetPorts(env: Env): Array<{ name: ServiceName | 'console'; port: number }> {
  const ports: Array<{ name: ServiceName | 'console'; port: number }> = [
    ...SERVICES.map((name) => ({ name, port: portOf(name, env) })),
    { name: 'console', port: consolePortOf(env) },
  ]
  const seen = new Map<number, string>()
  for (const { name, port } of ports) {
    const other = seen.get(port)
    if (other !== undefined)
      throw new Error(`${other} and ${name} are both given port ${port}; each needs its own`)
    seen.set(port, name)
  }
  return ports
}

function portSetting(name: string, fallback: number, env: Env): number {
  const raw = env[name]
  const port = raw === undefined || raw === '' ? fallback : Number(raw)
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`${name} must be a TCP port (1-65535), got ${JSON.stringify(raw)}`)
  }
  return port
}

/**
 * The environment of the console under `npm start`: the caller's (LOG_LEVEL, CONSOLE_POLL_MS and
 * TRACE_URL_TEMPLATE pass through), CONSOLE_PORT, each service's URL on this machine
 * (`ORDER_URL=http://127.0.0.1:3001`, ...), HOST=127.0.0.1 unless set, and LOG_FORMAT=pretty in a
 * terminal unless set. ADMIN_TOKEN comes with the caller's environment.
 */
export function consoleEnv(env: Env, terminal = false): Env {
  const own: Env = { CONSOLE_PORT: String(consolePortOf(env)) }
  for (const service of SERVICES) {
    own[`${service.toUpperCase()}_URL`] = `http://127.0.0.1:${portOf(service, env)}`
  }
  if (!env.HOST) own.HOST = '127.0.0.1'
  if (terminal && !env.LOG_FORMAT) own.LOG_FORMAT = 'pretty'
  const { PORT: _port, DATABASE_URL: _url, ...inherited } = env
  return { ...inherited, ...own }
}

/**
 * The broker names of a fleet run under `npm start -- --prefix <p>` (a second fleet beside the usual
 * one, or a test's): the events exchange `<p>saga.events` unless AMQP_EXCHANGE names one, and queue
 * prefixes `<p><service>` (queues `<p>payment.<handler>`). No prefix: `saga.events` (or
 * AMQP_EXCHANGE) and each service's default, its name.
 */
export function fleetBrokerNames(
  prefix: string,
  env: Env,
): { exchange: string; queuePrefixes: Record<ServiceName, string> } {
  const exchange = env.AMQP_EXCHANGE || `${prefix}saga.events`
  const queuePrefixes = Object.fromEntries(SERVICES.map((s) => [s, `${prefix}${s}`])) as Record<
    ServiceName,
    string
  >
  return { exchange, queuePrefixes }
}

/**
 * The environment one service runs with under `npm start`: the caller's environment (so LOG_LEVEL,
 * OUTBOX_* and friends pass through), its own PORT and DATABASE_URL, INSTANCES from
 * `<SERVICE>_INSTANCES` when set (e.g. ORDER_INSTANCES=2), and SEED_CATALOGUE=true for inventory so a
 * fresh fleet has stock to sell. When `npm start`'s own stdout is a terminal (`terminal`),
 * LOG_FORMAT=pretty unless the caller set LOG_FORMAT: the services write to npm start's pipe, so
 * they cannot see the terminal themselves. With a `prefix` (`npm start -- --prefix <p>`), the
 * exchange and queue prefix of `fleetBrokerNames`. HOST=127.0.0.1 unless the caller set HOST: a
 * development fleet has no authentication, so it answers on this machine only (the services' own
 * default, 0.0.0.0, is for containers, where the network is the container's).
 */
export function serviceEnv(
  db: ServiceDatabase,
  env: Env,
  amqpUrl: string,
  terminal = false,
  prefix = '',
): Env {
  const own: Env = {
    PORT: String(portOf(db.service, env)),
    DATABASE_URL: db.url,
    AMQP_URL: amqpUrl,
  }
  if (prefix !== '') {
    const names = fleetBrokerNames(prefix, env)
    own.AMQP_EXCHANGE = names.exchange
    own.AMQP_QUEUE_PREFIX = names.queuePrefixes[db.service]
  }
  if (!env.HOST) own.HOST = '127.0.0.1'
  if (db.service === 'inventory') own.SEED_CATALOGUE = env.SEED_CATALOGUE ?? 'true'
  if (terminal && !env.LOG_FORMAT) own.LOG_FORMAT = 'pretty'
  // ORDER_INSTANCES=2 runs two order processes on one port (service-kit's runServer, node:cluster).
  const instances = env[`${db.service.toUpperCase()}_INSTANCES`]
  if (instances !== undefined && instances !== '') own.INSTANCES = instances
  const { PORT: _port, DATABASE_URL: _url, ...inherited } = env
  return { ...inherited, ...own }
}
