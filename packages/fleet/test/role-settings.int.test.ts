import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import {
  bootstrapDatabases,
  dropDatabases,
  ROLE_SETTINGS,
  serviceDatabases,
  type BootstrapOptions,
  type ServiceDatabase,
} from '../src/bootstrap.js'

const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const script = fileURLToPath(new URL('../../../infra/postgres/create-service-databases.sh', import.meta.url))
const run = promisify(execFile)

// The session limits are set per service role (so psql or a script as the role is bounded too), by `npm run bootstrap` and by the
// docker-compose init script alike.
const made: BootstrapOptions[] = []
/** Options for the order service's database under a fresh prefix starting with `tag`, dropped after all. */
const madeOptions = (tag: string) => {
  const options = {
    postgresUrl,
    prefix: `${tag}${randomBytes(3).toString('hex')}_`,
    services: ['order'] as const,
  }
  made.push(options)
  return options
}
const ways: [string, () => Promise<ServiceDatabase>][] = [
  [
    'npm run bootstrap',
    async () => {
      const options = madeOptions('rb')
      const [db] = await bootstrapDatabases(options)
      return db!
    },
  ],
  [
    'infra/postgres/create-service-databases.sh',
    async () => {
      const options = madeOptions('rs')
      const [db] = serviceDatabases(options)
      await run('bash', [script], {
        env: { ...process.env, POSTGRES_URL: postgresUrl, SERVICE_DATABASES: db!.database },
      })
      return db!
    },
  ],
]

afterAll(async () => {
  for (const options of made) await dropDatabases(options)
})

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return client
}

describe.each(ways)('a service role made by %s', (_way, make) => {
  it('when it connects, then its session carries the fleet limits, it sees other roles’ transactions, and a lock wait ends at 2 s', async () => {
    const db = await make()
    const role = await connect(db.url)
    const adminUrl = new URL(postgresUrl)
    adminUrl.pathname = `/${db.database}`
    const admin = await connect(adminUrl.toString())
    try {
      const { rows } = await role.query<Record<string, string>>(
        `SELECT current_setting('statement_timeout') AS statement_timeout,
                current_setting('lock_timeout') AS lock_timeout,
                current_setting('idle_in_transaction_session_timeout') AS idle_in_transaction_session_timeout`,
      )
      expect(rows[0]).toEqual({ ...ROLE_SETTINGS })

      await role.query('CREATE TABLE probe (id int)')
      // Another role's open transaction (an operator's REPEATABLE READ), holding a lock on the table.
      await admin.query('BEGIN ISOLATION LEVEL REPEATABLE READ; LOCK TABLE probe IN ACCESS EXCLUSIVE MODE')
      const seen = await role.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`,
      )
      expect(seen.rows[0]?.n).toBeGreaterThan(0)

      // 55P03 is lock_timeout's own error (statement_timeout, 5 s, would end it with 57014, and
      // without either it would wait for the ROLLBACK below): the wait ended by the 2 s lock limit,
      // and not before 2 s. A loaded machine only makes the client's measure longer.
      const started = performance.now()
      const error = (await role.query('SELECT * FROM probe').catch((e: unknown) => e)) as { code?: string }
      const waitedMs = performance.now() - started
      expect(error.code).toBe('55P03')
      expect(waitedMs).toBeGreaterThanOrEqual(1_900)
      await admin.query('ROLLBACK')
    } finally {
      await role.end()
      await admin.end()
    }
  })
})
