/**
 * The package as a stranger installs it: `npm pack` of this build and of @saga/messaging, both
 * tarballs installed with the example's own lockfile into a copy of examples/quick-start (outside
 * the workspace), type-checked against the published declarations, and run against PostgreSQL and
 * RabbitMQ. The example's source is the README's quick start, so the README cannot rot without this
 * failing.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installPackedExample, readmeQuickStart, type PackedExample } from '@saga/testkit'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const coreDir = fileURLToPath(new URL('../../messaging', import.meta.url))
const exampleDir = fileURLToPath(new URL('../examples/quick-start', import.meta.url))

let example: PackedExample

beforeAll(async () => {
  example = await installPackedExample({
    exampleDir,
    packageDirs: [coreDir, packageDir],
    prefix: 'admin_quick_start',
  })
}, 300_000)

afterAll(async () => {
  await example?.close()
})

describe('the package outside the workspace', () => {
  it("when the README's quick start is compared with the example, then they are the same code", async () => {
    const source = await readFile(join(exampleDir, 'src/quick-start.ts'), 'utf8')
    expect(await readmeQuickStart(join(packageDir, 'README.md'))).toBe(source)
  })

  it('when the packed packages are installed into the example, then the example type-checks against their declarations', async () => {
    expect(await example.npmRun('typecheck')).toBe('')
  })

  it('when the quick start runs, then the dead letter is browsed, requeued with the token, handled, and the requeue recorded', async () => {
    const stdout = await example.npmRun('start')
    expect(stdout).toMatch(/^order [0-9a-f-]{36}: 1 dead letter in shop\.ship-when-order-placed\.dlq$/m)
    expect(stdout).toMatch(/^requeue: requeued, then handled$/m)
    expect(stdout).toMatch(/^recorded: ada@ops dead-letters\.requeue [0-9a-f-]{36}$/m)
    const { rows } = await example.db.pool.query<{ actor: string; action: string; inbox: number }>(
      `SELECT actor, action,
              (SELECT count(*)::int FROM inbox_message WHERE handler = 'ship-when-order-placed') AS inbox
         FROM messaging_admin_action`,
    )
    expect(rows).toEqual([{ actor: 'ada@ops', action: 'dead-letters.requeue', inbox: 1 }])
  })
})
