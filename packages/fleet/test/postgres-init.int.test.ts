import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropDatabases, SERVICES, serviceDatabases } from '../src/bootstrap.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

describe('Dockerfile', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces: string[] }

  it('when the dependency layer is built, then it copies every workspace manifest npm ci needs', () => {
    const manifests = rootPackage.workspaces.flatMap((pattern) =>
      pattern.endsWith('/*')
        ? readdirSync(join(root, pattern.slice(0, -2)))
            .map((name) => `${pattern.slice(0, -1)}${name}/package.json`)
            .filter((file) => existsSync(join(root, file)))
        : [`${pattern}/package.json`],
    )
    for (const manifest of manifests) expect(dockerfile).toContain(`COPY ${manifest} `)
    expect(dockerfile).toContain('RUN npm ci')
  })

  it('when a service image starts, then it runs what `npm start` runs in the service', () => {
    for (const service of SERVICES) {
      const pkg = JSON.parse(readFileSync(join(root, 'services', service, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>
      }
      expect(pkg.scripts.start).toBe('node dist/server.js')
      expect(pkg.scripts.generate).toContain(
        'PRISMA_SCHEMA_ENGINE_BINARY=${PRISMA_SCHEMA_ENGINE_BINARY:-/bin/true}',
      )
    }
    expect(dockerfile).toContain('CMD ["node", "dist/server.js"]')
    expect(dockerfile).toContain('turbo run build --filter=@saga/${SERVICE}-service')
  })
})

describe('infra/postgres/create-service-databases.sh', () => {
  const prefix = `sh${randomBytes(3).toString('hex')}_`
  const dbs = serviceDatabases({ postgresUrl, prefix })

  afterAll(async () => {
    await dropDatabases({ postgresUrl, prefix })
  })

  it('when run twice against the local server, then each role reaches only its own database', async () => {
    const script = join(root, 'infra/postgres/create-service-databases.sh')
    const env = {
      ...process.env,
      POSTGRES_URL: postgresUrl,
      SERVICE_DATABASES: dbs.map((d) => d.database).join(' '),
    }
    await run('bash', [script], { env })
    const { stdout } = await run('bash', [script], { env })
    expect(stdout.trim().split('\n')).toEqual(dbs.map((d) => `${d.database}: ready`))

    const [first, second] = dbs
    const attempt = async (database: string) => {
      const url = new URL(first!.url)
      url.pathname = `/${database}`
      const client = new pg.Client({ connectionString: url.toString() })
      try {
        await client.connect()
        return 'connected'
      } catch (error) {
        return (error as Error).message
      } finally {
        await client.end().catch(() => undefined)
      }
    }
    expect(await attempt(first!.database)).toBe('connected')
    expect(await attempt(second!.database)).toMatch(/permission denied for database/)
  })
})
