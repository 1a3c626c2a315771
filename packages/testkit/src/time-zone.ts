import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './database.js'

/** One millisecond before New York's 2026 spring-forward (07:00 UTC): a shifted write would cross the DST edge. */
export const AT = new Date('2026-03-08T06:59:59.999Z')
/** An instant in New York's daylight time, written there as `2026-11-01 01:30:00.123-04`. */
export const LATER = new Date('2026-11-01T05:30:00.123Z')

/** What `useShiftedTimeZones` gives each test. */
export interface ShiftedTimeZones<A> {
  db: TestDatabase
  /** The service's app, booted by `boot` on `db.url`. */
  app: A
  /** Another client of the database, its sessions in the database's default zone (New York). */
  other: pg.Pool
  /**
   * The instant stored in `table.column` of the row whose `key` is `id`, as epoch ms, read by `other`
   * (so in a New York session). @throws when the row is missing
   */
  storedMs(table: string, column: string, key: string, id: string): Promise<number>
}

/**
 * Issue 14.1's fixture, for a service's time-zone test: a fresh database whose default zone is
 * America/New_York, the process in Asia/Kolkata (+05:30), and the service's app booted on it by
 * `boot(url)`. Call it inside a `describe`: it registers the set-up and tear-down (restoring `TZ`,
 * closing the app, dropping the database) and the check that the service's migrations leave no
 * timestamp without time zone. Returns a getter for the fixture, valid inside the tests.
 */
export function useShiftedTimeZones<A extends { close(): Promise<unknown> }>(
  prefix: string,
  boot: (url: string) => Promise<A>,
): () => ShiftedTimeZones<A> {
  let fixture: ShiftedTimeZones<A> | undefined
  const processZone = process.env.TZ

  beforeAll(async () => {
    process.env.TZ = 'Asia/Kolkata'
    const db = await createTestDatabase({ prefix })
    await db.pool.query(`ALTER DATABASE "${db.name}" SET timezone TO 'America/New_York'`)
    const other = new pg.Pool({ connectionString: db.url, max: 2 })
    const storedMs = async (table: string, column: string, key: string, id: string): Promise<number> => {
      const { rows } = await other.query<{ ms: number; zone: string }>(
        `SELECT (extract(epoch FROM ${column}) * 1000)::float8 AS ms, current_setting('TimeZone') AS zone
         FROM ${table} WHERE ${key} = $1`,
        [id],
      )
      const row = rows[0]
      if (row === undefined) throw new Error(`no row of ${table} with ${key} = ${id}`)
      expect(row.zone).toBe('America/New_York')
      return row.ms
    }
    fixture = { db, other, storedMs, app: await boot(db.url) }
  })

  afterAll(async () => {
    await fixture?.app.close()
    await fixture?.other.end()
    await fixture?.db.drop()
    if (processZone === undefined) delete process.env.TZ
    else process.env.TZ = processZone
  })

  const get = (): ShiftedTimeZones<A> => {
    if (fixture === undefined) throw new Error('useShiftedTimeZones: the fixture is only set inside tests')
    return fixture
  }

  it('when the migrations are applied, then no column of the service is a timestamp without time zone', async () => {
    const { rows } = await get().other.query<{ column: string }>(
      `SELECT table_name || '.' || column_name AS column FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type IN ('timestamp without time zone', 'time without time zone')`,
    )
    expect(rows).toEqual([])
  })

  return get
}
