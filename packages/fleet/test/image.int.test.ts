// The runtime image's file set, assembled without a Docker engine the way the Dockerfile does it,
// proves it is enough: each service migrates and boots from it against the local PostgreSQL and
// RabbitMQ, one order goes through the whole chain, and the saga console boots from it, serves its
// UI and reads that order through the services.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
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

const workspaces = [...SERVICES.map((s) => `@saga/${s}-service`), '@saga/console']
const pruneOf = (names: string[]) => `turbo prune ${names.join(' ')} --docker --out-dir`
const buildOf = (names: string[]) => `turbo run build ${names.map((w) => `--filter=${w}`).join(' ')}`
// The Dockerfile's commands, word for word (the first test checks they are still in it).
const PRUNE = pruneOf(workspaces)
const BUILD = buildOf(workspaces)
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
  // The console's UI is bundled at build time; the image serves the bundle.
  'vite',
]

const id = randomBytes(3).toString('hex')
const prefix = `img${id}_`
const names = { exchange: `img${id}.events`, queuePrefix: (s: string) => `img${id}.${s}` }
const work = mkdtempSync(join(tmpdir(), 'saga-image-'))
const app = join(work, 'app')
const children: ChildProcess[] = []
const consoles: ChildProcess[] = []
/** The order the chain test placed (its Location), for the console to find. */
let placedOrder: string | undefined

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

const ports = new Map<ServiceName, number>()
let env: Record<ServiceName, NodeJS.ProcessEnv>

/**
 * The Dockerfile's prune, production install, Prisma pruning and collection into `app`; then a
 * database per service and each service's environment.
 */
async function assemble(): Promise<void> {
  const started = Date.now()
  const step = (what: string) => console.log(`image check: ${what} after ${Date.now() - started} ms`)
  // The Dockerfile's build (BUILD) is the workspaces' own, which turbo ran before this test (the
  // fleet's test waits for every build: packages/fleet/turbo.json); collect-runtime.sh copies it.
  const unbuilt = [...SERVICES, 'console'].filter(
    (s) => !existsSync(join(root, 'services', s, 'dist', 'server.js')),
  )
  if (unbuilt.length > 0) throw new Error(`not built: ${unbuilt.join(', ')}; run npm run build first`)
  await run('npx', [...pruneOf(workspaces).split(' '), join(work, 'out')], { cwd: root })
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
}

beforeAll(assemble, 600_000)

// Dropping four databases and removing the assembled node_modules can take over a minute on a busy machine.
afterAll(async () => {
  for (const child of [...children, ...consoles]) if (child.exitCode === null) child.kill('SIGKILL')
  await dropDatabases({ postgresUrl, prefix }).catch(() => undefined)
  await deleteBrokerObjects({ prefix: `img${id}.`, exchanges: [names.exchange] }, amqpUrl)
  rmSync(work, { recursive: true, force: true })
}, 120_000)

describe('the runtime image, assembled in a temporary folder', () => {
  it('when compared with the Dockerfile, then the check runs its commands and the image runs Node 24 as non-root', () => {
    for (const command of [PRUNE, BUILD, INSTALL, COLLECT, PRUNE_ENGINES])
      expect(dockerfile).toContain(command)
    expect(dockerfile).toMatch(/^EXPOSE 3001 3002 3003 3004 3005$/m)
    expect(dockerfile).toMatch(/^# +node services\/console\/dist\/server\.js +run the saga console/m)
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
})

describe('the four services, booted from the image', () => {
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
    placedOrder = location ?? undefined
    const status = await until('order final', async () => {
      const res = await fetch(new URL(location!, order))
      const { status } = (await res.json()) as { status: string }
      return status === 'PENDING' ? undefined : status
    })
    expect(status).toBe('CONFIRMED')
  }, 180_000)
})

describe('the saga console, booted from the image', () => {
  it('when the console boots from it, then it serves its UI and health, reads the order through the services, and exits 0 on SIGTERM', async () => {
    expect(existsSync(join(app, 'services/console/src')), 'console src').toBe(false)
    const port = await freePort()
    const urls = Object.fromEntries(
      SERVICES.map((s) => [`${s.toUpperCase()}_URL`, `http://127.0.0.1:${ports.get(s)}`]),
    )
    const child = spawn('node', ['services/console/dist/server.js'], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        CONSOLE_PORT: String(port),
        HOST: '127.0.0.1',
        ...urls,
        ADMIN_TOKEN: randomBytes(24).toString('hex'),
        CONSOLE_POLL_MS: '500',
        LOG_LEVEL: 'warn',
      },
      stdio: 'inherit',
    })
    consoles.push(child)
    const base = `http://127.0.0.1:${port}`
    await until('console ready', async () => ((await fetch(`${base}/health/ready`)).ok ? true : undefined))
    expect((await fetch(`${base}/health/live`)).status).toBe(200)
    // The UI from dist/ui: the page, and every script and stylesheet it names.
    const page = await fetch(`${base}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
    expect(assets.length, 'scripts and stylesheets in the page').toBeGreaterThan(0)
    for (const asset of assets) expect((await fetch(`${base}${asset}`)).status, asset).toBe(200)
    // Over HTTP only, from the image's files: the fleet snapshot names every service, and the
    // order list holds the order the chain test placed.
    const fleet = await until('fleet snapshot', async () => {
      const res = await fetch(`${base}/api/fleet`)
      return res.ok ? await res.text() : undefined
    })
    for (const s of SERVICES) expect(fleet, s).toContain(`"${s}"`)
    const orderId = placedOrder?.split('/').at(-1)
    expect(orderId).toMatch(/^[0-9a-f-]{36}$/)
    const orders = await fetch(`${base}/api/orders?limit=20`)
    expect(orders.status).toBe(200)
    expect(await orders.text()).toContain(orderId)
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    child.kill('SIGTERM')
    expect(await exit).toBe(0)
  }, 120_000)
})

describe('the four services, stopped', () => {
  it('when the services get SIGTERM, then each drains and exits 0', async () => {
    const exits = children.map(
      (child) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))),
    )
    for (const child of children) child.kill('SIGTERM')
    expect(await Promise.all(exits)).toEqual([0, 0, 0, 0])
  }, 60_000)
})

describe('collect-runtime.sh and the console', () => {
  const tree = mkdtempSync(join(tmpdir(), 'saga-collect-'))
  const [src, dest] = [join(tree, 'src'), join(tree, 'dest')]
  afterAll(() => rmSync(tree, { recursive: true, force: true }))

  it('when the console is built without its UI, then it stops and names what is missing; with it, it copies both', async () => {
    mkdirSync(join(src, 'services/console/dist'), { recursive: true })
    mkdirSync(dest, { recursive: true })
    writeFileSync(join(dest, 'package.json'), JSON.stringify({ workspaces: ['services/console'] }))
    writeFileSync(join(src, 'services/console/package.json'), '{"name":"@saga/console"}')
    writeFileSync(join(src, 'services/console/dist/server.js'), '')
    const collect = () => run('sh', [join(root, 'infra/image/collect-runtime.sh'), src, dest])
    await expect(collect()).rejects.toMatchObject({
      stderr: expect.stringContaining('services/console/dist/ui is missing') as unknown,
    })
    rmSync(join(dest, 'services'), { recursive: true, force: true })
    mkdirSync(join(src, 'services/console/dist/ui/assets'), { recursive: true })
    writeFileSync(join(src, 'services/console/dist/ui/index.html'), '<!doctype html>')
    writeFileSync(join(src, 'services/console/dist/ui/assets/app.js'), '')
    await collect()
    for (const file of ['dist/server.js', 'dist/ui/index.html', 'dist/ui/assets/app.js'])
      expect(existsSync(join(dest, 'services/console', file)), file).toBe(true)
  })
})
