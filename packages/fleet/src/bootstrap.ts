import { SERVICES, type ServiceName } from '@saga/contracts'
import pg from 'pg'

// The fleet's services (the saga map's); each owns the database and role `<prefix><service>_service`.
export { SERVICES, type ServiceName }

/** Default admin connection used to create databases and roles (a superuser, or a role with CREATEDB/CREATEROLE). */
export const DEFAULT_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/postgres'

/** Default broker connection of `npm start`, `bootstrap --drop` and the fleet CLI (RabbitMQ's guest user, local only). */
export const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672'

/** One service's database as bootstrapped: its name (= role name), password and connection URL. */
export interface ServiceDatabase {
  service: ServiceName
  database: string
  role: string
  password: string
  /** `postgresql://<role>:<password>@<admin host:port>/<database>` */
  url: string
}

/** Options of `bootstrapDatabases` and `dropDatabases`. */
export interface BootstrapOptions {
  /** Admin connection (default `DEFAULT_POSTGRES_URL`). */
  postgresUrl?: string | undefined
  /** Prepended to every database and role name, e.g. `e2e_ab12_` for a per-run copy. Default none. */
  prefix?: string | undefined
  /** Role passwords by service; default: the role's own name (local development only). */
  passwords?: Partial<Record<ServiceName, string>> | undefined
  services?: readonly ServiceName[] | undefined
}

const NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** The database (= role) name of a service, e.g. `order_service` or `e2e_ab12_order_service`. */
export function databaseName(service: ServiceName, prefix = ''): string {
  const name = `${prefix}${service}_service`
  if (!NAME.test(name))
    throw new Error(`invalid database name ${JSON.stringify(name)}: use [a-z0-9_], at most 63 characters`)
  return name
}

/** The service databases' names, passwords and URLs, without touching the server. */
export function serviceDatabases(opts: BootstrapOptions = {}): ServiceDatabase[] {
  const admin = new URL(opts.postgresUrl ?? DEFAULT_POSTGRES_URL)
  return (opts.services ?? SERVICES).map((service) => {
    const database = databaseName(service, opts.prefix)
    const password = opts.passwords?.[service] ?? database
    const url = new URL(admin.toString())
    url.username = database
    url.password = password
    url.pathname = `/${database}`
    return { service, database, role: database, password, url: url.toString() }
  })
}

/**
 * Session defaults of every service role (`ALTER ROLE ... SET`), so any session of the role (the
 * service, psql, a script) is bounded: the numbers of service-kit's DEFAULT_SESSION_LIMITS, which
 * the services' pools also send as startup options (DATABASE_*_TIMEOUT_MS), and
 * infra/postgres/create-service-databases.sh sets the same. Why these values: docs/architecture.md,
 * "Database sessions".
 */
export const ROLE_SETTINGS = {
  statement_timeout: '5s',
  lock_timeout: '2s',
  idle_in_transaction_session_timeout: '15s',
} as const

// Concurrent bootstraps (two test files, two terminals) race between "does it exist" and "create".
const ALREADY_EXISTS = new Set(['42P04', '42710', '23505'])
const ignoreExists = (error: unknown) => {
  if (!(error instanceof Error && ALREADY_EXISTS.has((error as { code?: string }).code ?? ''))) throw error
}

/**
 * Creates each service's role (LOGIN, password, `ROLE_SETTINGS`, member of pg_read_all_stats) and
 * database (owned by the role) if missing, and limits CONNECT on the database to its role: `REVOKE CONNECT ... FROM PUBLIC`, so a role is refused by
 * every other service's database. Idempotent: a second run only re-sets passwords and grants.
 * The `postgres` maintenance database keeps PostgreSQL's default (PUBLIC may connect); it holds no data.
 * @throws the pg error when the admin connection or a statement fails
 */
export async function bootstrapDatabases(opts: BootstrapOptions = {}): Promise<ServiceDatabase[]> {
  const targets = serviceDatabases(opts)
  const admin = new pg.Client({ connectionString: opts.postgresUrl ?? DEFAULT_POSTGRES_URL })
  await admin.connect()
  try {
    for (const t of targets) {
      const role = admin.escapeIdentifier(t.role)
      const db = admin.escapeIdentifier(t.database)
      const roles = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [t.role])
      if (roles.rowCount === 0) await admin.query(`CREATE ROLE ${role} LOGIN`).catch(ignoreExists)
      await admin.query(`ALTER ROLE ${role} LOGIN PASSWORD ${admin.escapeLiteral(t.password)}`)
      for (const [name, value] of Object.entries(ROLE_SETTINGS))
        await admin.query(`ALTER ROLE ${role} SET ${name} = ${admin.escapeLiteral(value)}`)
      // /metrics reports the oldest open transaction in the database, whoever holds it; without this
      // predefined role PostgreSQL hides other roles' transaction start times.
      await admin.query(`GRANT pg_read_all_stats TO ${role}`)
      const dbs = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [t.database])
      if (dbs.rowCount === 0) await admin.query(`CREATE DATABASE ${db} OWNER ${role}`).catch(ignoreExists)
      await admin.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${db} FROM PUBLIC`)
      await admin.query(`GRANT CONNECT, TEMPORARY ON DATABASE ${db} TO ${role}`)
    }
  } finally {
    await admin.end()
  }
  return targets
}

/**
 * The sessions other than the caller's on the fleet's databases (`pg_stat_activity`): a running
 * fleet's pools, or anyone else's `psql`. Empty when none is open or the databases do not exist.
 * @returns one entry per database with sessions, `{ database, sessions }`
 */
export async function databaseSessions(
  opts: BootstrapOptions = {},
): Promise<Array<{ database: string; sessions: number }>> {
  const admin = new pg.Client({ connectionString: opts.postgresUrl ?? DEFAULT_POSTGRES_URL })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ database: string; sessions: number }>(
      `SELECT datname AS database, count(*)::int AS sessions FROM pg_stat_activity
        WHERE datname = ANY($1) AND pid <> pg_backend_pid() GROUP BY datname ORDER BY datname`,
      [serviceDatabases(opts).map((t) => t.database)],
    )
    return rows
  } finally {
    await admin.end()
  }
}

/** Drops the databases (closing their connections, PostgreSQL 13+) and roles `bootstrapDatabases` made. */
export async function dropDatabases(opts: BootstrapOptions = {}): Promise<void> {
  const admin = new pg.Client({ connectionString: opts.postgresUrl ?? DEFAULT_POSTGRES_URL })
  await admin.connect()
  try {
    for (const t of serviceDatabases(opts)) {
      await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(t.database)} WITH (FORCE)`)
      await admin.query(`DROP ROLE IF EXISTS ${admin.escapeIdentifier(t.role)}`)
    }
  } finally {
    await admin.end()
  }
}
