import { SERVICES, type ServiceName } from '@saga/contracts'
import { DEFAULT_AMQP_URL } from '../bootstrap.js'
import { fleetBrokerNames, portOf } from '../start-env.js'

export { SERVICES, type ServiceName }

/**
 * Where the CLI finds the fleet. Defaults are the local fleet of `npm start` (the shared decisions:
 * database = role = password = `<service>_service`); every value is overridable so the same tool
 * works against a test run with prefixed names.
 */
export interface CliSettings {
  /** Base URL of the order service, e.g. `http://127.0.0.1:3001` (ORDER_SERVICE_URL). */
  orderUrl: string
  /** Broker URL (AMQP_URL). */
  amqpUrl: string
  /** The topic exchange of domain events (AMQP_EXCHANGE). */
  exchange: string
  /** Bearer token of the services' admin writes (ADMIN_TOKEN): `dlq requeue`/`discard`, `parked retry`. */
  adminToken: string | undefined
  /**
   * Per service: its base URL (`<SERVICE>_SERVICE_URL`, else `http://127.0.0.1:<port>` with the port
   * of `npm start`: `<SERVICE>_PORT` or 3001-3004; the order service's is `orderUrl`), its database URL
   * (`<SERVICE>_DATABASE_URL`) and queue prefix (`<SERVICE>_QUEUE_PREFIX`).
   */
  services: Record<ServiceName, { url: string; databaseUrl: string; queuePrefix: string }>
}

/**
 * Reads the settings from `env`, for the fleet `npm start -- --prefix <prefix>` started (default:
 * the unprefixed one): its databases `<prefix><service>_service`, queues `<prefix><service>.…` and
 * exchange `<prefix>saga.events`, each overridable by its variable. The ports are `npm start`'s
 * (`<SERVICE>_PORT`), so the same environment serves both.
 * @throws Error when a `<SERVICE>_PORT` is not a TCP port
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, prefix = ''): CliSettings {
  const names = fleetBrokerNames(prefix, env)
  const services = Object.fromEntries(
    SERVICES.map((s) => {
      const key = s.toUpperCase()
      const db = `${prefix}${s}_service`
      return [
        s,
        {
          url: (env[`${key}_SERVICE_URL`] ?? `http://127.0.0.1:${portOf(s, env)}`).replace(/\/$/, ''),
          databaseUrl: env[`${key}_DATABASE_URL`] ?? `postgres://${db}:${db}@127.0.0.1:5432/${db}`,
          queuePrefix: env[`${key}_QUEUE_PREFIX`] ?? names.queuePrefixes[s],
        },
      ]
    }),
  ) as CliSettings['services']
  return {
    orderUrl: services.order.url,
    amqpUrl: env.AMQP_URL ?? DEFAULT_AMQP_URL,
    exchange: names.exchange,
    adminToken: env.ADMIN_TOKEN || undefined,
    services,
  }
}

/** Errors of a connection that never came up (nothing listens, no route, no name), by code or message. */
const NO_ANSWER =
  /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|timeout|Socket closed/i

/**
 * Why the broker could not be used, naming its address without the credentials, e.g. `the broker at
 * 127.0.0.1:5672 did not answer (connect ECONNREFUSED 127.0.0.1:5672)`; an answer that refused (a
 * login) reads `the broker at 127.0.0.1:5672 refused (...)`; a missing exchange says which, and that
 * the CLI's --prefix must be npm start's.
 */
export function brokerUnreachable(amqpUrl: string, error: unknown): string {
  let where = 'the broker'
  try {
    const url = new URL(amqpUrl)
    const vhost = decodeURIComponent(url.pathname.slice(1))
    where = `the broker at ${url.host}${vhost ? ` (vhost ${vhost})` : ''}`
  } catch {
    // not a URL: amqplib says so in the reason
  }
  const code = (error as { code?: unknown } | undefined)?.code
  const reason = error instanceof Error ? error.message : String(error)
  const exchange = /NOT_FOUND - no exchange '([^']*)'/.exec(reason)?.[1]
  if (exchange !== undefined) {
    return (
      `${where} has no exchange '${exchange}': no fleet has run with these names; if npm start was ` +
      'given --prefix, give the CLI the same --prefix (or AMQP_EXCHANGE the exchange)'
    )
  }
  const noAnswer = NO_ANSWER.test(`${typeof code === 'string' ? code : ''} ${reason}`)
  return `${where} ${noAnswer ? 'did not answer' : 'refused'} (${reason})`
}
