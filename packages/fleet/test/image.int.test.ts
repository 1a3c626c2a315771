// The runtime image's file set, assembled without a Docker engine the way the Dockerfile does it,
// proves it is enough: each service migrates and boots from it against the local PostgreSQL and
// RabbitMQ, and one order goes through the whole chain.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { deleteBrokerObjects, freePort } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootstrapDatabases, dropDatabases, SERVICES, type ServiceName } from '../src/bootstrap.js'
import { orderBody } from '../src/cli/place.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')

const workspaces = SERVICES.map((s) => `@saga/${s}-service`)
// The Dockerfile's commands, word for word (the first test checks they are still in it).
const PRUNE = `turbo prune ${workspaces.join(' ')} --docker --out-dir`
const BUILD = `turbo run build ${workspaces.map((w) => `--filter=${w}`).join(' ')}`
const INSTALL = 'npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund'
const COLLECT = 'sh infra/image/collect-runtime.sh'
const PRUNE_ENGINES = 'RUN sh prune-prisma-engines.sh node_modules'
const DEV_TOOLING = [
  'typescript',
  'prisma',
  '@prisma/studio-core',
  '@electric-sql/pglite',
  'vitest',
  'turbo',
  'tsx',
  // Pretty logs are for a terminal (service-kit's chooseLogFormat): the image logs JSON.
  'pino-pretty',
]

const id = randomBytes(3).toString('hex')
const prefix = `img${id}_`
const names = { exchange: `img${id}.events`, queuePrefix: (s: string) => `img${id}.${s}` }
const work = mkdtempSync(join(tmpdir(), 'saga-image-'))
const app = join(work, 'app')
const children: ChildProcess[] = []

const sizes = { before: 0, after: 0 }
/** `du -sm` of a folder: its size on disk in MB (1,048,576 bytes). */
async function megabytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sm', dir])
  return Number(stdout.split(/\s/)[0])
}

/** The `@prisma/client/runtime/...` files the services' generated clients import. */
function importedCompilerFiles(): string[] {
  const files = SERVICES.flatMap((s) => {
    const source = readFileSync(join(root, `services/${s}/src/generated/prisma/internal/class.ts`), 'utf8')
    return [...source.matchAll(/@prisma\/client\/runtime\/(query_compiler_[\w.-]+)/g)].map((m) => m[1]!)
  })
  return [...new Set(files)]
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

describe('the runtime image, assembled in a temporary folder', () => {
  const ports = new Map<ServiceName, number>()
  let env: Record<ServiceName, NodeJS.ProcessEnv>

  beforeAll(async () => {
    const started = Date.now()
    const step = (what: string) => console.log(`image check: ${what} after ${Date.now() - started} ms`)
    await run('npx', [...BUILD.split(' '), '--output-logs=errors-only'], { cwd: root, timeout: 300_000 })
    step('build')
    await run('npx', [...PRUNE.split(' '), join(work, 'out')], { cwd: root })
    cpSync(join(work, 'out', 'json'), app, { recursive: true })
    await run('npm', INSTALL.split(' ').slice(1), { cwd: app, timeout: 300_000 })
    step('prune and production install')
    sizes.before = await megabytes(join(app, 'node_modules'))
    await run('sh', [join(root, 'infra/image/prune-prisma-engines.sh'), join(app, 'node_modules')])
    sizes.after = await megabytes(join(app, 'node_modules'))
    await run('sh', [join(root, 'infra/image/collect-runtime.sh'), root, app])
    const dbs = await bootstrapDatabases({ postgresUrl, prefix })
    env = {} as typeof env
    for (const db of dbs) {
      ports.set(db.service, await freePort())
      env[db.service] = {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        PORT: String(ports.get(db.service)),
        HOST: '127.0.0.1',
        DATABASE_URL: db.url,
        AMQP_URL: amqpUrl,
        AMQP_EXCHANGE: names.exchange,
        AMQP_QUEUE_PREFIX: names.queuePrefix(db.service),
        MIGRATE_ON_START: 'false',
        LOG_LEVEL: 'warn',
        SEED_CATALOGUE: 'true',
        CARRIER_ACCOUNT: 'image-check',
      }
    }
  }, 600_000)

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
    await dropDatabases({ postgresUrl, prefix }).catch(() => undefined)
    await deleteBrokerObjects({ prefix: `img${id}.`, exchanges: [names.exchange] }, amqpUrl)
    rmSync(work, { recursive: true, force: true })
  })

  it('when compared with the Dockerfile, then the check runs its commands and the image runs Node 24 as non-root', () => {
    for (const command of [PRUNE, BUILD, INSTALL, COLLECT, PRUNE_ENGINES])
      expect(dockerfile).toContain(command)
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24\.\d+\.\d+-bookworm-slim$/m)
    expect(dockerfile).toMatch(/^USER node$/m)
    expect(dockerfile).toContain('COPY --from=deps /app/node_modules node_modules')
    expect(dockerfile).toContain('COPY --from=build /runtime ./')
  })

  it('when assembled, then it holds no dev tooling and no sources', async () => {
    for (const pkg of DEV_TOOLING) expect(existsSync(join(app, 'node_modules', pkg)), pkg).toBe(false)
    for (const s of SERVICES) {
      expect(existsSync(join(app, 'services', s, 'src')), `${s} src`).toBe(false)
      expect(existsSync(join(app, 'services', s, 'dist', 'migrate.js')), `${s} migrate`).toBe(true)
    }
    const { stdout } = await run('du', ['-sm', join(app, 'node_modules'), app])
    console.log(`runtime file set (MB): ${stdout.trim().replace(/\s+/g, ' ').replaceAll(work, '')}`)
  })

  it('when the Prisma compilers of other databases are removed, then the ones the clients import stay', () => {
    console.log(
      `node_modules (MB): ${sizes.before} with every Prisma query compiler, ${sizes.after} with PostgreSQL's only`,
    )
    const runtime = join(app, 'node_modules/@prisma/client/runtime')
    const left = readdirSync(runtime).filter((f) => f.startsWith('query_compiler_'))
    expect(left.filter((f) => !f.includes('.postgresql.'))).toEqual([])
    const imported = importedCompilerFiles()
    expect(imported.length).toBeGreaterThan(0)
    for (const file of imported) expect(left, `${file} is imported by a generated client`).toContain(file)
    // MySQL, SQLite, SQL Server and CockroachDB: about 53 MB.
    expect(sizes.before - sizes.after).toBeGreaterThan(40)
  })

  it('when each service migrates and boots from it, then all four are ready and an order is CONFIRMED', async () => {
    for (const s of SERVICES) {
      const migrateEnv = { ...env[s], LOG_LEVEL: 'info' }
      const { stdout } = await run('node', [`services/${s}/dist/migrate.js`], {
        cwd: app,
        env: migrateEnv,
      }).catch((error: Error & { stdout?: string }) => {
        throw new Error(`${s} migrate failed: ${error.message}${error.stdout ?? ''}`)
      })
      expect(stdout, s).toContain('migrations applied')
    }
    for (const s of SERVICES) {
      const child = spawn('node', [`services/${s}/dist/server.js`], {
        cwd: app,
        env: env[s],
        stdio: 'inherit',
      })
      children.push(child)
    }
    for (const s of SERVICES) {
      await until(`${s} ready`, async () => {
        const res = await fetch(`http://127.0.0.1:${ports.get(s)}/health/ready`)
        return res.ok ? true : undefined
      })
    }
    const order = `http://127.0.0.1:${ports.get('order')}/orders`
    const body = orderBody({
      skus: ['MUG-001'],
      quantities: [1],
      unitPrice: 1250,
      currency: 'EUR',
      country: 'DE',
      paymentMethod: 'tok_visa',
    })
    const created = await fetch(order, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(created.status).toBe(201)
    const location = created.headers.get('location')
    const status = await until('order final', async () => {
      const res = await fetch(new URL(location!, order))
      const { status } = (await res.json()) as { status: string }
      return status === 'PENDING' ? undefined : status
    })
    expect(status).toBe('CONFIRMED')
  }, 180_000)

  it('when the services get SIGTERM, then each drains and exits 0', async () => {
    const exits = children.map(
      (child) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    )
    for (const child of children) child.kill('SIGTERM')
    expect(await Promise.all(exits)).toEqual([0, 0, 0, 0])
  }, 60_000)
})
