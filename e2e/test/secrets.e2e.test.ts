import { spawn } from 'node:child_process'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startLoneService, type LoneService } from '../src/lone-service.js'
import { SERVICES, type ServiceName } from '../src/run.js'
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
      env: { PATH: process.env.PATH ?? '', LOG_FORMAT: 'json', ...env },
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

describe('a malformed URL-shaped setting holding a password', () => {
  const cases = Object.entries(MALFORMED).flatMap(([variable, values]) =>
    values.map(([value, problem]) => ({ variable, value, problem })),
  )

  it.each(SERVICES)(
    'when %s is started with each, then it exits 1 naming the variable and the fault, and no output holds the password',
    async (service) => {
      for (const { variable, value, problem } of cases) {
        const { code, output } = await runToExit(
          ['--import', '@saga/service-kit/telemetry', server(service)],
          {
            [variable]: value,
          },
        )
        expect({ variable, value, code }).toEqual({ variable, value, code: 1 })
        expect(output).toContain(`${variable}: ${problem}`)
        expect(output).not.toContain(SECRET)
      }
    },
  )

  it.each([
    ['npm run bootstrap', 'packages/fleet/dist/bootstrap-cli.js'],
    ['npm start', 'packages/fleet/dist/start.js'],
    ["npm test's infrastructure check", 'packages/fleet/dist/ensure-infra-cli.js'],
  ])(
    'when %s is run with POSTGRES_URL or AMQP_URL malformed, then it exits 1 naming the variable and the fault, without the password',
    async (_command, entry) => {
      const fleetCases = [
        ...(MALFORMED.DATABASE_URL ?? []).map(([value, problem]) => ['POSTGRES_URL', value, problem]),
        ...(MALFORMED.AMQP_URL ?? []).map(([value, problem]) => ['AMQP_URL', value, problem]),
      ]
      for (const [variable, value, problem] of fleetCases) {
        // A prefix and ports of its own: should the check ever let a value through, nothing of
        // the usual fleet is touched.
        const { code, output } = await runToExit([entry, '--prefix', 'secrets_probe_'], {
          [variable!]: value!,
          ORDER_PORT: '1',
        })
        expect({ variable, value, code }).toEqual({ variable, value, code: 1 })
        expect(output).toContain(`${variable}: ${problem}`)
        expect(output).not.toContain(SECRET)
      }
    },
  )
})

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
