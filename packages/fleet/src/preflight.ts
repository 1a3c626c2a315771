import amqp from 'amqplib'
import pg from 'pg'

/** One dependency's state: reachable, or what failed and how to start it. */
export interface PreflightResult {
  name: 'PostgreSQL' | 'RabbitMQ'
  /** `host:port` tried. */
  address: string
  ok: boolean
  error?: string | undefined
  /** Commands that start it, shown when it is not reachable. */
  howToStart: string[]
}

/** Options of `preflight`. */
export interface PreflightOptions {
  postgresUrl: string
  amqpUrl: string
  /** Per dependency (ms, default 3,000): an unreachable host must not make `npm start` hang. */
  timeoutMs?: number | undefined
}

const addressOf = (url: string, defaultPort: number) => {
  const u = new URL(url)
  return `${u.hostname || '127.0.0.1'}:${u.port || defaultPort}`
}

const describe = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0])
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name
  return String(error)
}

async function withTimeout<T>(what: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      what,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** What to run when a server is not reachable, per server. */
const HOW_TO_START = {
  postgres: [
    'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
    'or: docker run -d --name saga-postgres -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15',
    'or point POSTGRES_URL at a server where this user may create databases and roles',
  ],
  rabbitmq: [
    'rabbitmq-server -detached   (then: rabbitmqctl await_startup)',
    'or: docker run -d --name saga-rabbitmq -p 5672:5672 -p 15672:15672 rabbitmq:3-management',
    'or point AMQP_URL at a reachable broker',
  ],
}

/** Runs `check` against the server `name` at `address`: ok when it resolves, else its error described. */
async function probe(
  name: PreflightResult['name'],
  address: string,
  howToStart: string[],
  check: () => Promise<void>,
): Promise<PreflightResult> {
  const result: PreflightResult = { name, address, ok: false, howToStart }
  try {
    await check()
    result.ok = true
  } catch (error) {
    result.error = describe(error)
  }
  return result
}

/** Connects to PostgreSQL as the admin URL's user and runs `SELECT 1`. */
export async function checkPostgres(postgresUrl: string, timeoutMs = 3_000): Promise<PreflightResult> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: timeoutMs })
  client.on('error', () => undefined)
  return probe('PostgreSQL', addressOf(postgresUrl, 5432), HOW_TO_START.postgres, async () => {
    try {
      await withTimeout(client.connect(), timeoutMs)
      await withTimeout(client.query('SELECT 1'), timeoutMs)
    } finally {
      await client.end().catch(() => undefined)
    }
  })
}

/** Opens an AMQP connection with the URL's credentials. */
export async function checkRabbitMq(amqpUrl: string, timeoutMs = 3_000): Promise<PreflightResult> {
  return probe('RabbitMQ', addressOf(amqpUrl, 5672), HOW_TO_START.rabbitmq, async () => {
    const connection = await withTimeout(amqp.connect(amqpUrl, { timeout: timeoutMs }), timeoutMs + 500)
    connection.on('error', () => undefined)
    await connection.close()
  })
}

/** Checks both dependencies at once. */
export async function preflight(opts: PreflightOptions): Promise<PreflightResult[]> {
  return Promise.all([
    checkPostgres(opts.postgresUrl, opts.timeoutMs),
    checkRabbitMq(opts.amqpUrl, opts.timeoutMs),
  ])
}

/** The message printed instead of a stack trace: each unreachable dependency, where, and how to start it. */
export function formatPreflightFailures(results: PreflightResult[]): string {
  return results
    .filter((r) => !r.ok)
    .map(
      (r) =>
        `${r.name} is not reachable at ${r.address}: ${r.error ?? 'unknown error'}\n` +
        `  Start it with:\n${r.howToStart.map((c) => `    ${c}`).join('\n')}`,
    )
    .join('\n\n')
}
