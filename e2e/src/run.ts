import { randomBytes } from 'node:crypto'
import { SERVICES, type ServiceName } from '@saga/contracts'

export { SERVICES, type ServiceName }

/** Names unique to one e2e run: databases, exchange and queue prefixes. */
export interface RunNames {
  /** e.g. `e2e_3fa9c1d2`; lower case so it is a valid unquoted PostgreSQL identifier. */
  id: string
  /** Database of each service, e.g. `e2e_3fa9c1d2_order_service`. */
  database: Record<ServiceName, string>
  /** The run's topic exchange, e.g. `e2e_3fa9c1d2.events`. */
  exchange: string
  /** AMQP_QUEUE_PREFIX of each service, e.g. `e2e_3fa9c1d2.inventory`. */
  queuePrefix: Record<ServiceName, string>
}

/** Base URLs of the infrastructure; overridable through the same variables the tests tier uses. */
export const infra = {
  /** Superuser URL of the server's maintenance database; databases of a run are made through it. */
  postgresUrl: process.env.POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
}

/**
 * What every process the suite starts inherits of its own environment: PATH, and NODE_COMPILE_CACHE
 * when set (`npm test` sets it: Node keeps the compiled code of each module there, so the hundred
 * or so service starts of a run compile each module once).
 */
export function baseEnv(): Record<string, string> {
  const cache = process.env.NODE_COMPILE_CACHE
  return { PATH: process.env.PATH ?? '', ...(cache ? { NODE_COMPILE_CACHE: cache } : {}) }
}

/** Makes the names of a new run. */
export function runNames(): RunNames {
  const id = `e2e_${randomBytes(4).toString('hex')}`
  const each = <T>(f: (s: ServiceName) => T): Record<ServiceName, T> =>
    Object.fromEntries(SERVICES.map((s) => [s, f(s)])) as Record<ServiceName, T>
  return {
    id,
    database: each((s) => `${id}_${s}_service`),
    exchange: `${id}.events`,
    queuePrefix: each((s) => `${id}.${s}`),
  }
}

/** The URL of `database` on the server of `infra.postgresUrl` (same user). */
export function databaseUrl(database: string): string {
  const url = new URL(infra.postgresUrl)
  url.pathname = `/${database}`
  return url.toString()
}
