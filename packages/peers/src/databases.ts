import pg from 'pg'

/** `adminUrl` with its database replaced by `database`. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/** Creates `name` (fails when it exists: each run uses names of its own). */
export async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE "${name}"`)
  } finally {
    await admin.end()
  }
}

/** Drops every database whose name starts with `prefix`, ending their connections (PostgreSQL 13+ `FORCE`). */
export async function dropDatabases(adminUrl: string, prefix: string): Promise<string[]> {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [prefix],
    )
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
    return rows.map((r) => r.datname)
  } finally {
    await admin.end()
  }
}
