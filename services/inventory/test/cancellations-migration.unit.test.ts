import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'

const read = (path: string) => readFileSync(path, 'utf8')

/** The SQL of `sql` without its comment lines: the statements alone. */
const statements = (sql: string) =>
  sql
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .trim()

describe('inventory cancellations migration', () => {
  it('when the service migrates, then its cancelled_order table is exactly @saga/cancellations/sql/cancelled-order.sql', () => {
    // A change to cancelled-order.sql needs a new migration in every service that keeps the register;
    // this test is what says so. The migration holds the service's other changes of that step too.
    const own = read(
      new URL('../prisma/migrations/20261130160000_cancelled_orders/migration.sql', import.meta.url).pathname,
    )
    const table = statements(
      read(createRequire(import.meta.url).resolve('@saga/cancellations/sql/cancelled-order.sql')),
    )
    expect(table).toMatch(/^CREATE TABLE "cancelled_order" \(/)
    expect(own).toContain(table)
  })
})
