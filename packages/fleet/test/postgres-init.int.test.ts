import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { dropDatabases, serviceDatabases } from '../src/bootstrap.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

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
