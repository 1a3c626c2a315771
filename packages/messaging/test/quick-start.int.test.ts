/**
 * The package as a stranger installs it: `npm pack` of this build, installed with its own lockfile
 * into a copy of examples/quick-start (outside the workspace), type-checked against the published
 * declarations, and run against PostgreSQL and RabbitMQ. The example's source is the README's quick
 * start, so the README cannot rot without this failing.
 */
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AMQP_URL, createTestDatabase, uniqueName, type TestDatabase } from '@saga/testkit'

const run = promisify(execFile)
const packageDir = fileURLToPath(new URL('..', import.meta.url))
const exampleDir = fileURLToPath(new URL('../../../examples/quick-start', import.meta.url))

/** The first ```ts block under the README's "Quick start" heading. */
async function readmeQuickStart(): Promise<string> {
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (!match?.[1]) throw new Error('README.md has no ```ts block under "## Quick start"')
  return match[1]
}

let workDir: string
let db: TestDatabase
const vhost = uniqueName('quick_start')

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'messaging-quick-start-'))
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'src'])
    await cp(join(exampleDir, entry), join(workDir, entry), { recursive: true })
  // The build turbo made before the tests; --ignore-scripts keeps `prepack` from rebuilding it now.
  await run('npm', ['pack', '--ignore-scripts', '--pack-destination', workDir], { cwd: packageDir })
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: workDir, timeout: 240_000 })
  db = await createTestDatabase({ prefix: 'quick_start' })
  await run('rabbitmqctl', ['add_vhost', vhost])
  await run('rabbitmqctl', [
    'set_permissions',
    '-p',
    vhost,
    new URL(AMQP_URL).username || 'guest',
    '.*',
    '.*',
    '.*',
  ])
}, 300_000)

afterAll(async () => {
  await run('rabbitmqctl', ['delete_vhost', vhost]).catch(() => undefined)
  await db?.drop()
  if (workDir) await rm(workDir, { recursive: true, force: true })
})

describe('the package outside the workspace', () => {
  it("when the README's quick start is compared with the example, then they are the same code", async () => {
    const example = await readFile(join(exampleDir, 'src/quick-start.ts'), 'utf8')
    expect(await readmeQuickStart()).toBe(example)
  })

  it('when the packed package is installed into the example, then the example type-checks against its declarations', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'typecheck'], { cwd: workDir })
    expect(stdout).toBe('')
  })

  it('when the quick start runs, then the order is written with its event, the handler writes the invoice, and a duplicate delivery changes nothing', async () => {
    const amqpUrl = new URL(AMQP_URL)
    amqpUrl.pathname = `/${vhost}`
    const { stdout } = await run('npm', ['run', '-s', 'start'], {
      cwd: workDir,
      env: { ...process.env, DATABASE_URL: db.url, AMQP_URL: amqpUrl.toString() },
      timeout: 60_000,
    })
    expect(stdout).toMatch(/^order [0-9a-f-]{36} placed; its invoice written by the handler$/m)
    expect(stdout).toMatch(/^delivered twice, handled once: 1 invoice$/m)
    const { rows } = await db.pool.query<{ invoices: number; inbox: number }>(
      `SELECT (SELECT count(*)::int FROM invoices) AS invoices,
              (SELECT count(*)::int FROM inbox_message WHERE handler = 'invoice-when-order-placed') AS inbox`,
    )
    expect(rows).toEqual([{ invoices: 1, inbox: 1 }])
  })
})
