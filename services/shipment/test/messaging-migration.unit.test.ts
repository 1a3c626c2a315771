import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const read = (path: string) => readFileSync(path, 'utf8')

describe('shipment messaging migration', () => {
  it('when the service migrates, then its messaging tables are exactly @saga/messaging/sql/messaging.sql', () => {
    // A change to messaging.sql needs a new migration in every service; this test is what says so.
    const own = read(
      new URL('../prisma/migrations/20261129000000_messaging/migration.sql', import.meta.url).pathname,
    )
    expect(own).toBe(read(createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql')))
  })
})
