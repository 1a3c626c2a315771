import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * The two texts a migration check compares: the service's own migration `folder` (under
 * `prisma/migrations`, beside the calling test file's `test` folder) and the SQL `shipped` by a
 * package (a specifier such as `@saga/messaging/sql/messaging.sql`, resolved as the service resolves it).
 */
function migrationAndShipped(testFileUrl: string, folder: string, shipped: string) {
  const read = (path: string) => readFileSync(path, 'utf8')
  return {
    own: read(fileURLToPath(new URL(`../prisma/migrations/${folder}/migration.sql`, testFileUrl))),
    shipped: read(createRequire(testFileUrl).resolve(shipped)),
  }
}

/** The SQL of `sql` without its comment lines: the statements alone. */
const statements = (sql: string) =>
  sql
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .trim()

/**
 * The SQL of `sql` as its statements, comments aside, whitespace collapsed and `IF NOT EXISTS`
 * dropped (the shipped SQL may be applied again; a migration runs once, so that guard is the one
 * difference allowed), in order.
 */
const statementList = (sql: string): string[] =>
  statements(sql)
    .split(';')
    .map((statement) =>
      statement
        .replace(/\s+/g, ' ')
        .replace(/ IF NOT EXISTS /gi, ' ')
        .trim(),
    )
    .filter(Boolean)

/** The migrations that copy `@saga/messaging/sql/messaging.sql`, in the order they apply. */
export const MESSAGING_MIGRATIONS = [
  '20261129000000_messaging',
  '20261201230000_messaging_admin_action',
] as const

/**
 * A service's check that its messaging migrations (`MESSAGING_MIGRATIONS` under `prisma/migrations`,
 * beside the service's `test` folder) hold, together and in order, exactly the statements of
 * `@saga/messaging/sql/messaging.sql` as the service resolves it. A change to messaging.sql needs
 * a new migration in every service (and its name here); this check is what says so.
 * @param service names the `describe`
 * @param testFileUrl the calling test file's `import.meta.url`: locates the service and resolves its `@saga/messaging`
 */
export function describeMessagingMigration(service: string, testFileUrl: string): void {
  describe(`${service} messaging migration`, () => {
    it('when the service migrates, then its messaging tables are exactly @saga/messaging/sql/messaging.sql', () => {
      const texts = MESSAGING_MIGRATIONS.map((folder) =>
        migrationAndShipped(testFileUrl, folder, '@saga/messaging/sql/messaging.sql'),
      )
      const own = texts.flatMap((text) => statementList(text.own))
      const shipped = statementList(texts[0]?.shipped ?? '')
      expect(shipped.length).toBeGreaterThan(0)
      expect(own).toEqual(shipped)
    })
  })
}

/**
 * A service's check that its cancellation-register migration
 * (`prisma/migrations/20261130160000_cancelled_orders`, beside the service's `test` folder) contains
 * the statements of `@saga/cancellations/sql/cancelled-order.sql` exactly, as the service resolves
 * it. The migration holds the service's other changes of that step too, so the check is containment
 * of the statements (comments aside). A change to cancelled-order.sql needs a new migration in every
 * service that keeps the register; this check is what says so.
 * @param service names the `describe`
 * @param testFileUrl the calling test file's `import.meta.url`: locates the service and resolves its `@saga/cancellations`
 */
export function describeCancellationsMigration(service: string, testFileUrl: string): void {
  describe(`${service} cancellations migration`, () => {
    it('when the service migrates, then its cancelled_order table is exactly @saga/cancellations/sql/cancelled-order.sql', () => {
      const { own, shipped } = migrationAndShipped(
        testFileUrl,
        '20261130160000_cancelled_orders',
        '@saga/cancellations/sql/cancelled-order.sql',
      )
      const table = statements(shipped)
      expect(table).toMatch(/^CREATE TABLE "cancelled_order" \(/)
      expect(own).toContain(table)
    })
  })
}
