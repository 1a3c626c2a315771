import type { Pool } from 'pg'
import { withTimeout, type CheckResult, type ReadinessCheck } from './health.js'
import { readMigrations } from './migrate.js'

// SQLSTATE 42P01 undefined_table: no migration was ever applied to this database.
const isMissingTable = (error: unknown) => (error as { code?: unknown } | null)?.code === '42P01'

/** What `_prisma_migrations` records as applied: finished and not rolled back. */
async function appliedMigrations(pool: Pool): Promise<Set<string>> {
  try {
    const { rows } = await pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    )
    return new Set(rows.map((r) => r.migration_name))
  } catch (error) {
    if (isMissingTable(error)) return new Set()
    throw error
  }
}

/**
 * Readiness against the database's schema: `down` while a migration this build ships (a folder of
 * `migrationsDir`, Prisma's layout, read once) is not recorded as finished in `_prisma_migrations`,
 * so an instance whose code needs a column the database does not have yet never takes requests.
 * The body names what is missing: `{ status: 'down', error, missing: ['20261130160000_deadlines'] }`.
 * A schema newer than the build (a rollback of the code after a migration) is `up`, with the
 * migrations this build does not know as `newer`: migrations are written to be compatible with the
 * previous release (docs/deploy.md, "Rollouts"). A database that does not answer within `timeoutMs`
 * (default 1,000) is `down` too; the `database` check says why.
 * @param migrationsDir the service's prisma/migrations folder (absolute path)
 */
export function schemaCheck(pool: Pool, migrationsDir: string, timeoutMs = 1_000): ReadinessCheck {
  let shipped: Promise<string[]> | undefined
  return {
    name: 'schema',
    async check(): Promise<CheckResult> {
      try {
        shipped ??= readMigrations(migrationsDir).then((files) => files.map((f) => f.name))
        const expected = await shipped
        const applied = await withTimeout(appliedMigrations(pool), timeoutMs, 'schema')
        const missing = expected.filter((name) => !applied.has(name))
        const known = new Set(expected)
        const newer = [...applied].filter((name) => !known.has(name)).sort()
        if (missing.length > 0) {
          const error = `the database schema is older than this build: ${missing.length} migration(s) not applied (first ${missing[0]}); the migrate step applies them`
          return { status: 'down', error, missing }
        }
        return { status: 'up', migrations: expected.length, ...(newer.length > 0 ? { newer } : {}) }
      } catch (error) {
        return { status: 'down', error: error instanceof Error ? error.message : String(error) }
      }
    },
  }
}
