import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/**
 * A service's check that its messaging migration (`prisma/migrations/20261129000000_messaging`,
 * beside the service's `test` folder) is, byte for byte, `@saga/messaging/sql/messaging.sql` as the
 * service resolves it. A change to messaging.sql needs a new migration in every service; this check
 * is what says so.
 * @param service names the `describe`
 * @param testFileUrl the calling test file's `import.meta.url`: locates the service and resolves its `@saga/messaging`
 */
export function describeMessagingMigration(service: string, testFileUrl: string): void {
  const read = (path: string) => readFileSync(path, 'utf8')
  describe(`${service} messaging migration`, () => {
    it('when the service migrates, then its messaging tables are exactly @saga/messaging/sql/messaging.sql', () => {
      const own = read(
        fileURLToPath(new URL('../prisma/migrations/20261129000000_messaging/migration.sql', testFileUrl)),
      )
      expect(own).toBe(read(createRequire(testFileUrl).resolve('@saga/messaging/sql/messaging.sql')))
    })
  })
}
