import { spawn } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoneService, type LoneService } from '../src/lone-service.js'
import { baseEnv, SERVICES, type ServiceName } from '../src/run.js'
import { repoRoot } from '../src/service-process.js'
import { eventually } from '../src/wait.js'

// No credential in any output, whatever the input: every URL-shaped setting of the services and of
// `npm start` / `npm run bootstrap` is given malformed values holding a password, and the whole of
// stdout and stderr (and, where the service starts, every page it serves) is searched for it.
const SECRET = 'S3cretPass'

/** Malformed values of each URL-shaped setting, with the problem the error must name. */
const MALFORMED: Record<string, [value: string, problem: string][]> = {
  DATABASE_URL: [
    [`postgresql://u:${SECRET}@127.0.0.1:99999/db`, 'the port is out of range'],
    [`postgresql://u:${SECRET}@127.0.0.1:abc/db`, 'the port is not a number'],
    [`mysql://u:${SECRET}@127.0.0.1:3306/db`, 'the scheme is mysql://'],
    [`http://u:${SECRET}@127.0.0.1:5432/db`, 'the scheme is http://'],
    [`postgresql://u:${SECRET}#x@127.0.0.1/db`, 'is not a valid URL'],
    [`u:${SECRET}@127.0.0.1:5432/db`, 'is not a URL'],
    [`postgresql://u:${SECRET}@127.0.0.1/db?sslmode=bogus`, 'sslmode "bogus" is not one of'],
  ],
  AMQP_URL: [
    [`amqp://u:${SECRET}@127.0.0.1:99999`, 'the port is out of range'],
    [`amqp://u:${SECRET}@127.0.0.1:five`, 'the port is not a number'],
    [`http://u:${SECRET}@127.0.0.1:5672`, 'the scheme is http://'],
    [`u:${SECRET}@127.0.0.1:5672`, 'is not a URL'],
  ],
  OTEL_EXPORTER_OTLP_ENDPOINT: [
    [`http://u:${SECRET}@127.0.0.1:99999`, 'the port is out of range'],
    [`ftp://u:${SECRET}@127.0.0.1:4318`, 'the scheme is ftp://'],
  ],
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: [
    [`http://u:${SECRET}@127.0.0.1:abc/v1/traces`, 'the port is not a number'],
  ],
}

/** Runs `node <args>` in the repository with `env` until it exits (at most 60 s); its code and output. */
function runToExit(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env: { ...baseEnv(), LOG_FORMAT: 'json', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}

const server = (service: ServiceName) => path.join('services', service, 'dist', 'server.js')

/** One malformed value of a variable and the problem its error must name. */
interface Case {
  variable: string
  value: string
  problem: string
}

const casesOf = (variable: string, values = MALFORMED[variable] ?? []): Case[] =>
  values.map(([value, problem]) => ({ variable, value, problem }))

/**
 * The cases of `variables` grouped into starts: the k-th start sets the k-th value of each at once.
 * One start is a process of about a second of CPU, and a configuration error names every variable
 * that is wrong, so each value is still checked, with as many starts as the longest list needs.
 */
function startsOf(variables: Array<[name: string, values: Case[]]>): Case[][] {
  const starts: Case[][] = []
  for (const [, cases] of variables) cases.forEach((c, k) => (starts[k] ??= []).push(c))
  return starts
}

/** Runs `args` once per start with the start's values; each must exit 1 naming every fault, without the password. */
async function expectEachRefused(args: string[], starts: Case[][], env: Record<string, string> = {}) {
  for (const start of starts) {
    const values = Object.fromEntries(start.map((c) => [c.variable, c.value]))
    const { code, output } = await runToExit(args, { ...env, ...values })
    expect({ values, code }).toEqual({ values, code: 1 })
    for (const { variable, problem } of start) expect(output).toContain(`${variable}: ${problem}`)
    expect(output).not.toContain(SECRET)
  }
}

describe('a malformed URL-shaped setting holding a password', () => {
  // A service reads its own settings after the telemetry preload read the OTLP ones, and either
  // stops at the first that is wrong: the two groups are started apart.
  const groups = [
    startsOf([
      ['DATABASE_URL', casesOf('DATABASE_URL')],
      ['AMQP_URL', casesOf('AMQP_URL')],
    ]),
    startsOf([
      ['OTEL_EXPORTER_OTLP_ENDPOINT', casesOf('OTEL_EXPORTER_OTLP_ENDPOINT')],
      ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', casesOf('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT')],
    ]),
  ]
  const serviceStarts = groups.flat()
  // Every service reads these settings through the same code (service-kit's env.ts and telemetry
  // settings, each value's message also unit-tested in url-setting.unit.test.ts): one service is
  // started with every value, the others with the first start of each group, which sets every
  // variable once and so proves each is read through that code, and that nothing leaks.
  const wiringStarts = groups.map((starts) => starts[0]!)
  const startsFor = (service: ServiceName) => (service === 'order' ? serviceStarts : wiringStarts)

  it('when the starts are grouped, then every malformed value of every variable is in one of them, and each service sets every variable', () => {
    const all = Object.keys(MALFORMED).flatMap((variable) => casesOf(variable))
    expect(serviceStarts.flat().sort(byValue)).toEqual(all.sort(byValue))
    for (const service of SERVICES) {
      const variables = new Set(startsFor(service).flatMap((start) => start.map((c) => c.variable)))
      expect([...variables].sort()).toEqual(Object.keys(MALFORMED).sort())
    }
  })

  it.each(SERVICES)(
    'when %s is started with them, then it exits 1 naming the variable and the fault, and no output holds the password',
    async (service) => {
      await expectEachRefused(
        ['--import', '@saga/service-kit/telemetry', server(service)],
        startsFor(service),
      )
    },
  )

  // The three commands check POSTGRES_URL and AMQP_URL through one function (packages/fleet's
  // url-settings.ts): npm run bootstrap gets every value, the other two the first start, which sets both.
  const fleetStarts = startsOf([
    ['POSTGRES_URL', casesOf('POSTGRES_URL', MALFORMED.DATABASE_URL)],
    ['AMQP_URL', casesOf('AMQP_URL')],
  ])
  it.each([
    ['npm run bootstrap', 'packages/fleet/dist/bootstrap-cli.js', fleetStarts],
    ['npm start', 'packages/fleet/dist/start.js', fleetStarts.slice(0, 1)],
    ["npm test's infrastructure check", 'packages/fleet/dist/ensure-infra-cli.js', fleetStarts.slice(0, 1)],
  ])(
    'when %s is run with POSTGRES_URL or AMQP_URL malformed, then it exits 1 naming the variable and the fault, without the password',
    async (_command, entry, starts) => {
      // A prefix and ports of its own: should the check ever let a value through, nothing of
      // the usual fleet is touched.
      await expectEachRefused([entry, '--prefix', 'secrets_probe_'], starts, { ORDER_PORT: '1' })
    },
  )
})

const byValue = (a: Case, b: Case) => `${a.variable} ${a.value}`.localeCompare(`${b.variable} ${b.value}`)

describe('a service whose broker URL holds a password and cannot be used', () => {
  let s: LoneService

  beforeAll(async () => {
    // Port 1 on loopback: nothing listens, so the service runs with its broker down.
    s = await startLoneService('order', {
      AMQP_URL: `amqp://saga:${SECRET}@127.0.0.1:1/vhost`,
      LOG_LEVEL: 'debug',
    })
    await eventually(
      'the service answers /health/live',
      async () => (await fetch(`${s.proc.url}/health/live`)).ok,
      {
        timeoutMs: 60_000,
      },
    )
  })

  afterAll(async () => {
    await s?.close()
  })

  it('when every page it serves is read and its logs are searched, then none holds the password', async () => {
    const pages = [
      '/health',
      '/health/ready',
      '/health/live',
      '/metrics',
      '/documentation/json',
      '/no-such-page',
      '/orders/not-a-uuid',
    ]
    for (const page of pages) {
      const response = await fetch(`${s.proc.url}${page}`)
      const body = await response.text()
      expect({ page, leaked: body.includes(SECRET) }).toEqual({ page, leaked: false })
    }
    const ready = (await (await fetch(`${s.proc.url}/health/ready`)).json()) as {
      checks: Record<string, unknown>
    }
    expect(JSON.stringify(ready.checks.broker)).toContain('down')
    // The relay and the consumer have tried (and logged) at least one connect by now.
    await eventually('a failed connect logged', () => s.output().includes('amqp connect failed'), {
      timeoutMs: 30_000,
    })
    expect(s.output()).not.toContain(SECRET)
  })
})
