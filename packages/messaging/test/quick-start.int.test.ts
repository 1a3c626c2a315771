/**
 * The package as a stranger installs it: `npm pack` of this build, installed with its own lockfile
 * into a copy of examples/quick-start (outside the workspace), type-checked against the published
 * declarations, and run against PostgreSQL and RabbitMQ. The example's source is the README's quick
 * start, so the README cannot rot without this failing.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installPackedExample, readmeQuickStart, type PackedExample } from '@saga/testkit'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const exampleDir = fileURLToPath(new URL('../../../examples/quick-start', import.meta.url))

let example: PackedExample

beforeAll(async () => {
  example = await installPackedExample({ exampleDir, packageDirs: [packageDir], prefix: 'quick_start' })
}, 300_000)

afterAll(async () => {
  await example?.close()
})

describe('the package outside the workspace', () => {
  it("when the README's quick start is compared with the example, then they are the same code", async () => {
    const source = await readFile(join(exampleDir, 'src/quick-start.ts'), 'utf8')
    expect(await readmeQuickStart(join(packageDir, 'README.md'))).toBe(source)
  })

  it('when the packed package is installed into the example, then the example type-checks against its declarations', async () => {
    expect(await example.npmRun('typecheck')).toBe('')
  })

  it('when the quick start runs, then the order is written with its event, the handler writes the invoice, and a duplicate delivery changes nothing', async () => {
    const stdout = await example.npmRun('start')
    expect(stdout).toMatch(/^order [0-9a-f-]{36} placed; its invoice written by the handler$/m)
    expect(stdout).toMatch(/^delivered twice, handled once: 1 invoice$/m)
    const { rows } = await example.db.pool.query<{ invoices: number; inbox: number }>(
      `SELECT (SELECT count(*)::int FROM invoices) AS invoices,
              (SELECT count(*)::int FROM inbox_message WHERE handler = 'invoice-when-order-placed') AS inbox`,
    )
    expect(rows).toEqual([{ invoices: 1, inbox: 1 }])
  })
})
