import pg from 'pg'
import { databaseUrl, infra, SERVICES, type RunNames, type ServiceName } from './run.js'

/**
 * Creates the run's four empty databases (the services migrate them on start, MIGRATE_ON_START
 * defaults to true). Owned by the superuser of `infra.postgresUrl`: a per-run role per database
 * would test nothing the services' own tests do not, and costs a role to clean up.
 */
export async function createRunDatabases(names: RunNames): Promise<void> {
  const admin = new pg.Client({ connectionString: infra.postgresUrl })
  await admin.connect()
  try {
    for (const service of SERVICES) await admin.query(`CREATE DATABASE "${names.database[service]}"`)
  } finally {
    await admin.end()
  }
}

/** Drops the run's databases, also with services still connected (WITH (FORCE), PostgreSQL 13+). */
export async function dropRunDatabases(names: RunNames): Promise<void> {
  const admin = new pg.Client({ connectionString: infra.postgresUrl })
  await admin.connect()
  try {
    for (const service of SERVICES) {
      await admin.query(`DROP DATABASE IF EXISTS "${names.database[service]}" WITH (FORCE)`)
    }
  } finally {
    await admin.end()
  }
}

/**
 * One small pool per service database, for the invariant checker and direct look-ups: the run's
 * databases on the server of `infra.postgresUrl` (`names`), or the four given URLs (`{ urls }`, e.g.
 * a compose fleet's published PostgreSQL ports).
 */
export class RunDatabases {
  readonly pools: Record<ServiceName, pg.Pool>

  constructor(source: RunNames | { urls: Record<ServiceName, string> }) {
    const urlOf = (s: ServiceName): string =>
      'urls' in source ? source.urls[s] : databaseUrl(source.database[s])
    const pool = (s: ServiceName): pg.Pool => {
      const p = new pg.Pool({ connectionString: urlOf(s), max: 2 })
      // The teardown's DROP DATABASE ... WITH (FORCE) may terminate (57P01) a connection that is
      // still closing; an idle client's error must not fail the run as an unhandled error.
      p.on('error', () => undefined)
      return p
    }
    this.pools = Object.fromEntries(SERVICES.map((s) => [s, pool(s)])) as Record<ServiceName, pg.Pool>
  }

  /** Runs `sql` in the service's database and returns the rows. */
  async query<R extends pg.QueryResultRow = Record<string, unknown>>(
    service: ServiceName,
    sql: string,
    params: unknown[] = [],
  ): Promise<R[]> {
    return (await this.pools[service].query<R>(sql, params)).rows
  }

  async close(): Promise<void> {
    await Promise.all(SERVICES.map((s) => this.pools[s].end()))
  }
}
