/**
 * The package as a stranger installs it: `npm pack` of this build and of @saga/messaging, both
 * tarballs installed with the example's own lockfile into a copy of examples/quick-start (outside
 * the workspace), type-checked against the published declarations, and run against PostgreSQL and
 * RabbitMQ. The example's source is the README's quick start, so the README cannot rot without this
 * failing.
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
const coreDir = fileURLToPath(new URL('../../messaging', import.meta.url))
const exampleDir = fileURLToPath(new URL('../examples/quick-start', import.meta.url))

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
const vhost = uniqueName('admin_quick_start')

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'messaging-admin-quick-start-'))
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'src'])
    await cp(join(exampleDir, entry), join(workDir, entry), { recursive: true })
  // The builds turbo made before the tests; --ignore-scripts keeps `prepack` from rebuilding them now.
  for (const dir of [coreDir, packageDir])
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', workDir], { cwd: dir })
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: workDir, timeout: 240_000 })
  db = await createTestDatabase({ prefix: 'admin_quick_start' })
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

  it('when the packed packages are installed into the example, then the example type-checks against their declarations', async () => {
    const { stdout } = await run('npm', ['run', '-s', 'typecheck'], { cwd: workDir })
    expect(stdout).toBe('')
  })

  it('when the quick start runs, then the dead letter is browsed, requeued with the token, handled, and the requeue recorded', async () => {
    const amqpUrl = new URL(AMQP_URL)
    amqpUrl.pathname = `/${vhost}`
    const { stdout } = await run('npm', ['run', '-s', 'start'], {
      cwd: workDir,
      env: { ...process.env, DATABASE_URL: db.url, AMQP_URL: amqpUrl.toString() },
      timeout: 60_000,
    })
    expect(stdout).toMatch(/^order [0-9a-f-]{36}: 1 dead letter in shop\.ship-when-order-placed\.dlq$/m)
    expect(stdout).toMatch(/^requeue: requeued, then handled$/m)
    expect(stdout).toMatch(/^recorded: ada@ops dead-letters\.requeue [0-9a-f-]{36}$/m)
    const { rows } = await db.pool.query<{ actor: string; action: string; inbox: number }>(
      `SELECT actor, action,
              (SELECT count(*)::int FROM inbox_message WHERE handler = 'ship-when-order-placed') AS inbox
         FROM messaging_admin_action`,
    )
    expect(rows).toEqual([{ actor: 'ada@ops', action: 'dead-letters.requeue', inbox: 1 }])
  })
})
