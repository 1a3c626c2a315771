import { randomBytes } from 'node:crypto'
import { dropDatabaseWhenIdle } from '@saga/testkit'
import pg from 'pg'

const adminUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

/** A database made for one test run, dropped by `drop()`. */
export interface ScratchDatabase {
  name: string
  url: string
  drop(): Promise<void>
}

/** Creates `sk_<prefix>_<random>` on the server of POSTGRES_URL. */
export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const name = `sk_${prefix}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE "${name}"`)
  } finally {
    await admin.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl })
      await c.connect()
      try {
        await dropDatabaseWhenIdle(c, name)
      } finally {
        await c.end()
      }
    },
  }
}
