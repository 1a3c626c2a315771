import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient } from '../../src/generated/prisma/client.js'

const ADMIN_URL = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const MIGRATIONS = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))
const MESSAGING_SQL = fileURLToPath(
  new URL('../../../../packages/messaging/sql/messaging.sql', import.meta.url),
)

/** A per-run database with the service's migrations applied, a pg pool and a Prisma client on it. */
export interface ServiceTestDatabase {
  url: string
  pool: pg.Pool
  prisma: PrismaClient
  drop(): Promise<void>
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** Creates `test_<random>_<service>`, applies `prisma/migrations/*` in name order; `drop()` removes it. */
export async function createServiceTestDatabase(service: string): Promise<ServiceTestDatabase> {
  const name = `test_${Math.random().toString(36).slice(2, 10)}_${service}`
  await admin(`CREATE DATABASE "${name}"`)
  const parsed = new URL(ADMIN_URL)
  parsed.pathname = `/${name}`
  const url = parsed.toString()
  const pool = new pg.Pool({ connectionString: url, max: 4 })
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 20 }) })
  const drop = async () => {
    await prisma.$disconnect()
    await pool.end()
    await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
  }
  try {
    const sqls: string[] = []
    for (const dir of (await readdir(MIGRATIONS)).sort())
      sqls.push(await readFile(join(MIGRATIONS, dir, 'migration.sql'), 'utf8'))
    // Until the service's first migration carries the messaging tables, take the canonical copy.
    if (!sqls.some((sql) => sql.includes('outbox_message')))
      sqls.unshift(await readFile(MESSAGING_SQL, 'utf8'))
    for (const sql of sqls) await pool.query(sql)
  } catch (error) {
    await drop()
    throw error
  }
  return { url, pool, prisma, drop }
}
