import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { AMQP_URL } from './broker.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { uniqueName } from './names.js'

const run = promisify(execFile)

/** An example project installed from packed tarballs outside the workspace, with its own database and vhost. */
export interface PackedExample {
  /** The temporary directory the example was copied into and installed in. */
  workDir: string
  db: TestDatabase
  /** AMQP_URL with the example's own vhost. */
  amqpUrl: string
  /** Runs `npm run -s <script>` in the example with DATABASE_URL and AMQP_URL set; resolves with stdout. */
  npmRun(script: string, timeoutMs?: number): Promise<string>
  /** Drops the database and the vhost and deletes the directory. Never throws for what is already gone. */
  close(): Promise<void>
}

/**
 * Installs an example as a stranger would: copies `exampleDir`'s package.json, package-lock.json,
 * tsconfig.json and src/ into a temporary directory, `npm pack`s each of `packageDirs` into it
 * (with --ignore-scripts: the builds turbo made are packed as they are), runs `npm ci` there with
 * the example's own lockfile (less the integrity of the tarballs packed here, `unpinPackedTarballs`),
 * and makes a database and a RabbitMQ vhost named after `prefix`.
 * Takes 20-60 s (the install). Needs `npm` and `rabbitmqctl` on PATH.
 * @throws the failed command's error (its stderr in the message).
 */
export async function installPackedExample(options: {
  exampleDir: string
  packageDirs: readonly string[]
  prefix: string
}): Promise<PackedExample> {
  const workDir = await mkdtemp(join(tmpdir(), `${options.prefix}-`))
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'src'])
    await cp(join(options.exampleDir, entry), join(workDir, entry), { recursive: true })
  await unpinPackedTarballs(join(workDir, 'package-lock.json'))
  for (const dir of options.packageDirs)
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', workDir], { cwd: dir })
  await run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: workDir, timeout: 240_000 })
  const db = await createTestDatabase({ prefix: options.prefix })
  const vhost = uniqueName(options.prefix)
  await run('rabbitmqctl', ['add_vhost', vhost])
  const user = new URL(AMQP_URL).username || 'guest'
  await run('rabbitmqctl', ['set_permissions', '-p', vhost, user, '.*', '.*', '.*'])
  const amqpUrl = new URL(AMQP_URL)
  amqpUrl.pathname = `/${vhost}`
  return {
    workDir,
    db,
    amqpUrl: amqpUrl.toString(),
    async npmRun(script, timeoutMs = 60_000) {
      const env = { ...process.env, DATABASE_URL: db.url, AMQP_URL: amqpUrl.toString() }
      return (await run('npm', ['run', '-s', script], { cwd: workDir, env, timeout: timeoutMs })).stdout
    },
    async close() {
      await run('rabbitmqctl', ['delete_vhost', vhost]).catch(() => undefined)
      await db.drop()
      await rm(workDir, { recursive: true, force: true })
    },
  }
}

/**
 * Drops the `integrity` of every lockfile entry resolved from a `file:` tarball: those tarballs are
 * packed from the working tree at each install, so their hash changes with every change to the
 * packages; a hash committed with the example would fail `npm ci` (EINTEGRITY) after any edit.
 * Registry entries keep theirs.
 */
async function unpinPackedTarballs(lockPath: string): Promise<void> {
  const lock = JSON.parse(await readFile(lockPath, 'utf8')) as {
    packages?: Record<string, { resolved?: string; integrity?: string }>
  }
  for (const entry of Object.values(lock.packages ?? {}))
    if (entry.resolved?.startsWith('file:')) delete entry.integrity
  await writeFile(lockPath, JSON.stringify(lock, null, 2))
}

/**
 * The first ```ts block under a README's "## Quick start" heading, for comparing with the example it
 * must equal. @throws Error when the README has no such block.
 */
export async function readmeQuickStart(readmePath: string): Promise<string> {
  const readme = await readFile(readmePath, 'utf8')
  const section = readme.slice(readme.indexOf('## Quick start'))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (!match?.[1]) throw new Error(`${readmePath} has no \`\`\`ts block under "## Quick start"`)
  return match[1]
}
