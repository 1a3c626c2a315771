import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  bootstrapDatabases,
  dropDatabases,
  SERVICES,
  serviceDatabases,
  type ServiceDatabase,
} from '../src/bootstrap.js'

const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const prefix = `t${randomBytes(3).toString('hex')}_`
const options = { postgresUrl, prefix }

async function connectAs(db: ServiceDatabase, database: string): Promise<string> {
  const url = new URL(db.url)
  url.pathname = `/${database}`
  const client = new pg.Client({ connectionString: url.toString() })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return 'connected'
  } catch (error) {
    return (error as Error).message
  } finally {
    await client.end().catch(() => undefined)
  }
}

afterAll(async () => {
  await dropDatabases(options)
})

describe('bootstrapDatabases', () => {
  it('when run twice, then the second run succeeds and changes nothing', async () => {
    const first = await bootstrapDatabases(options)
    const second = await bootstrapDatabases(options)
    expect(second).toEqual(first)
    expect(first.map((d) => d.database)).toEqual(SERVICES.map((s) => `${prefix}${s}_service`))
  })

  it('when each role connects, then its own database accepts it and the other three refuse it', async () => {
    const dbs = await bootstrapDatabases(options)
    for (const db of dbs) {
      expect(await connectAs(db, db.database)).toBe('connected')
      for (const other of dbs.filter((o) => o !== db)) {
        expect(await connectAs(db, other.database)).toMatch(/permission denied for database/)
      }
    }
  })

  it('when a role owns its database, then it can create tables there (migrations run as the role)', async () => {
    const [db] = await bootstrapDatabases(options)
    const client = new pg.Client({ connectionString: db!.url })
    await client.connect()
    try {
      await client.query('CREATE TABLE probe (id int)')
      await client.query('DROP TABLE probe')
    } finally {
      await client.end()
    }
  })

  it('when dropped, then neither the databases nor the roles remain', async () => {
    await bootstrapDatabases(options)
    await dropDatabases(options)
    const admin = new pg.Client({ connectionString: postgresUrl })
    await admin.connect()
    try {
      const names = serviceDatabases(options).map((d) => d.database)
      const dbs = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [names])
      const roles = await admin.query('SELECT rolname FROM pg_roles WHERE rolname = ANY($1)', [names])
      expect(dbs.rowCount).toBe(0)
      expect(roles.rowCount).toBe(0)
    } finally {
      await admin.end()
    }
  })
})
