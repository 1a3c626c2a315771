import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MigrationError, runMigrations } from '../src/migrate.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

let db: ScratchDatabase
let pool: pg.Pool
let dir: string

async function addMigration(name: string, sql: string) {
  await mkdir(join(dir, name), { recursive: true })
  await writeFile(join(dir, name, 'migration.sql'), sql)
}

beforeEach(async () => {
  db = await createScratchDatabase('migrate')
  pool = new pg.Pool({ connectionString: db.url, max: 4 })
  dir = await mkdtemp(join(tmpdir(), 'migrations-'))
})

afterEach(async () => {
  await pool.end()
  await db.drop()
  await rm(dir, { recursive: true, force: true })
})

describe('runMigrations', () => {
  it('when run twice, then each migration applies once in name order with Prisma bookkeeping', async () => {
    await addMigration(
      '20260102000000_second',
      'ALTER TABLE thing ADD COLUMN label text NOT NULL DEFAULT $$x$$;',
    )
    await addMigration('20260101000000_first', 'CREATE TABLE thing (id int PRIMARY KEY);')

    expect(await runMigrations({ pool, migrationsDir: dir })).toEqual([
      '20260101000000_first',
      '20260102000000_second',
    ])
    expect(await runMigrations({ pool, migrationsDir: dir })).toEqual([])

    const { rows } = await pool.query<{
      migration_name: string
      checksum: string
      applied_steps_count: number
      finished_at: Date | null
    }>(
      'SELECT migration_name, checksum, applied_steps_count, finished_at FROM _prisma_migrations ORDER BY started_at, migration_name',
    )
    const file = await readFile(join(dir, '20260101000000_first', 'migration.sql'))
    expect(rows.map((r) => r.migration_name)).toEqual(['20260101000000_first', '20260102000000_second'])
    expect(rows[0]?.checksum).toBe(createHash('sha256').update(file).digest('hex'))
    expect(rows.every((r) => r.applied_steps_count === 1 && r.finished_at !== null)).toBe(true)
    await pool.query('INSERT INTO thing (id) VALUES (1)')
  })

  it('when two instances start at once, then the advisory lock lets the migration apply exactly once', async () => {
    await addMigration(
      '20260101000000_first',
      'CREATE TABLE thing (id int PRIMARY KEY); SELECT pg_sleep(0.3);',
    )
    const other = new pg.Pool({ connectionString: db.url, max: 2 })
    try {
      const [a, b] = await Promise.all([
        runMigrations({ pool, migrationsDir: dir }),
        runMigrations({ pool: other, migrationsDir: dir }),
      ])
      expect([...a, ...b]).toEqual(['20260101000000_first'])
    } finally {
      await other.end()
    }
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM _prisma_migrations')
    expect(rows[0]?.n).toBe('1')
  })

  it('when a migration fails, then the error names the file and SQL error, it is rolled back and later ones do not run', async () => {
    await addMigration('20260101000000_first', 'CREATE TABLE thing (id int PRIMARY KEY);')
    await addMigration('20260102000000_broken', 'CREATE TABLE half (id int); SELECT * FROM no_such_table;')
    await addMigration('20260103000000_third', 'CREATE TABLE third (id int);')

    const error: unknown = await runMigrations({ pool, migrationsDir: dir }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(MigrationError)
    expect((error as Error).message).toContain(join(dir, '20260102000000_broken', 'migration.sql'))
    expect((error as Error).message).toContain('relation "no_such_table" does not exist')

    const tables = await pool.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1",
    )
    expect(tables.rows.map((r) => r.name)).toEqual(['_prisma_migrations', 'thing'])
    const recorded = await pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations',
    )
    expect(recorded.rows.map((r) => r.migration_name)).toEqual(['20260101000000_first'])
  })
})
