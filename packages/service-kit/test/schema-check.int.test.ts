import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runMigrations } from '../src/migrate.js'
import { schemaCheck } from '../src/schema-check.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

let db: ScratchDatabase
let pool: pg.Pool
let older: string
let build: string

async function migration(dir: string, name: string, sql: string) {
  await mkdir(join(dir, name), { recursive: true })
  await writeFile(join(dir, name, 'migration.sql'), sql)
}

beforeEach(async () => {
  db = await createScratchDatabase('schema')
  pool = new pg.Pool({ connectionString: db.url, max: 2 })
  // db.drop() ends sessions still open; an idle client's error must not crash the file.
  pool.on('error', () => undefined)
  // The previous release shipped one migration; this build ships two.
  older = await mkdtemp(join(tmpdir(), 'schema-older-'))
  build = await mkdtemp(join(tmpdir(), 'schema-build-'))
  for (const dir of [older, build]) await migration(dir, '20260101000000_first', 'CREATE TABLE t (id int);')
  await migration(build, '20260102000000_second', 'ALTER TABLE t ADD COLUMN label text;')
})

afterEach(async () => {
  await pool.end()
  await db.drop()
  await rm(older, { recursive: true, force: true })
  await rm(build, { recursive: true, force: true })
})

describe('schemaCheck', () => {
  it('when no migration was ever applied, then it is down and names every migration of the build', async () => {
    const result = await schemaCheck(pool, build).check()
    expect(result).toMatchObject({
      status: 'down',
      missing: ['20260101000000_first', '20260102000000_second'],
    })
    expect(result.error).toContain('older than this build')
  })

  it('when the database has the previous release schema, then it is down until the migrate step ran', async () => {
    await runMigrations({ pool, migrationsDir: older })
    const check = schemaCheck(pool, build)
    expect(await check.check()).toMatchObject({ status: 'down', missing: ['20260102000000_second'] })

    await runMigrations({ pool, migrationsDir: build })
    expect(await check.check()).toEqual({ status: 'up', migrations: 2 })
  })

  it('when the schema is newer than the build (the code rolled back), then it is up and says so', async () => {
    await runMigrations({ pool, migrationsDir: build })
    expect(await schemaCheck(pool, older).check()).toEqual({
      status: 'up',
      migrations: 1,
      newer: ['20260102000000_second'],
    })
  })

  it('when a migration failed half way (recorded unfinished), then it counts as not applied', async () => {
    await runMigrations({ pool, migrationsDir: older })
    await pool.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at)
       VALUES (gen_random_uuid()::text, 'x', '20260102000000_second', now(), NULL)`,
    )
    expect(await schemaCheck(pool, build).check()).toMatchObject({
      status: 'down',
      missing: ['20260102000000_second'],
    })
  })

  it('when the database does not answer, then it is down with the reason', async () => {
    const unreachable = new pg.Pool({
      connectionString: 'postgresql://postgres@127.0.0.1:1/none',
      connectionTimeoutMillis: 500,
    })
    try {
      const result = await schemaCheck(unreachable, build).check()
      expect(result.status).toBe('down')
      expect(String(result.error)).toMatch(/ECONNREFUSED|timeout|did not answer/)
    } finally {
      await unreachable.end()
    }
  })
})
