import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Ajv } from 'ajv'
import amqp from 'amqplib'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { brokerPolicies } from '../k8s/broker.js'
import { SERVICES } from '../src/bootstrap.js'
import { brokerUsers, deleteBrokerUsers } from '../src/broker-users.js'
import { DEFAULT_PORTS } from '../src/start-env.js'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../', import.meta.url))
const read = (file: string) => readFileSync(join(root, file), 'utf8')

interface ComposeService {
  image?: string
  build?: { context: string; target?: string }
  command?: string[]
  profiles?: string[]
  ports?: string[]
  healthcheck?: { test: string[]; start_period?: string }
  stop_grace_period?: string
  depends_on?: Record<string, { condition: string }>
  environment?: Record<string, string>
}
interface Compose {
  services: Record<string, ComposeService>
  volumes: Record<string, unknown>
}
interface Definitions {
  users: Array<{ name: string; password: string }>
  vhosts: Array<{ name: string }>
  permissions: Array<{ user: string; vhost: string; configure: string; write: string; read: string }>
  topic_permissions: Array<{ user: string; vhost: string; exchange: string; write: string; read: string }>
  policies: Array<{ vhost: string; name: string }>
}

// `merge: true` resolves the `<<: *anchor` keys the way Compose does, so assertions see the result.
const compose = parse(read('docker-compose.yml'), { merge: true }) as Compose
const definitions = JSON.parse(read('infra/rabbitmq/definitions.json')) as Definitions

describe('docker-compose.yml', () => {
  it('when checked against the Compose Specification JSON Schema, then it is valid', () => {
    const schema = JSON.parse(read('infra/compose/compose-spec.json')) as object
    // The schema names draft-07 by an https $schema ajv does not know; the schema itself is not in
    // question. Formats (durations) are left to Compose: ajv checks names, types and structure.
    const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, validateFormats: false })
    const validate = ajv.compile(schema)
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true)
    expect(validate({ services: { x: { ports: 3001 } } })).toBe(false)
    expect(validate({ services: { x: { image: 'a', helthcheck: {} } } })).toBe(false)
  })

  it('when resolved, then every published port is on 127.0.0.1 and every healthcheck has a start period', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      for (const port of s.ports ?? []) expect(port, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/)
      // The collector's image has no shell or HTTP client a healthcheck could run.
      if (name === 'otel-collector') continue
      expect(s.healthcheck?.start_period, name).toMatch(/^\d+s$/)
    }
    expect(compose.services.rabbitmq?.image).toMatch(/^rabbitmq:4\.\d+\.\d+-management$/)
  })

  it('when resolved, then each service runs from the one image on its own database and broker user', () => {
    const users = new Map(brokerUsers().map((u) => [u.service, u]))
    for (const service of SERVICES) {
      const s = compose.services[service]!
      const port = DEFAULT_PORTS[service]
      expect(s.image).toBe('saga/service:local')
      expect(s.build?.target).toBe('runtime')
      expect(s.command).toEqual([
        'node',
        '--import',
        '@saga/service-kit/telemetry',
        `services/${service}/dist/server.js`,
      ])
      expect(s.healthcheck?.test).toEqual([
        'CMD',
        'node',
        'healthcheck.js',
        `http://127.0.0.1:${port}/health/ready`,
      ])
      expect(s.depends_on).toEqual({
        [`postgres-${service}`]: { condition: 'service_healthy' },
        rabbitmq: { condition: 'service_healthy' },
      })
      expect(s.environment?.DATABASE_URL).toContain(`@postgres-${service}:5432/${service}_service`)
      const user = users.get(service)!
      expect(s.environment?.AMQP_URL).toBe(`amqp://${user.user}:${user.password}@rabbitmq:5672/saga`)
      expect(s.ports).toEqual([`127.0.0.1:${port}:${port}`])
      expect(compose.volumes).toHaveProperty(`postgres-${service}`)
    }
  })

  it('when resolved, then the console runs from the one image and reads the services by their compose names', () => {
    const console = compose.services.console!
    expect(console.image).toBe('saga/service:local')
    expect(console.command).toEqual(['node', 'services/console/dist/server.js'])
    expect(console.ports).toEqual(['127.0.0.1:3005:3005'])
    expect(console.healthcheck?.test).toEqual([
      'CMD',
      'node',
      'healthcheck.js',
      'http://127.0.0.1:3005/health/ready',
    ])
    for (const service of SERVICES) {
      expect(console.environment?.[`${service.toUpperCase()}_URL`]).toBe(
        `http://${service}:${DEFAULT_PORTS[service]}`,
      )
      expect(console.depends_on?.[service]).toEqual({ condition: 'service_started' })
      // One credential for the fleet, from the environment: the file holds none.
      expect(compose.services[service]?.environment?.ADMIN_TOKEN).toBe('${ADMIN_TOKEN:-}')
    }
    expect(console.environment?.ADMIN_TOKEN).toBe('${ADMIN_TOKEN:-}')
    expect(console.environment).not.toHaveProperty('DATABASE_URL')
  })

  it("when the order CLI uses infra/compose/cli.env, then it names the compose fleet's loopback ports", () => {
    const env = Object.fromEntries(
      read('infra/compose/cli.env')
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    )
    const published = (service: string, target: number) =>
      compose.services[service]?.ports?.find((p) => p.endsWith(`:${target}`))?.split(':')[1]
    for (const service of SERVICES) {
      const url = new URL(env[`${service.toUpperCase()}_DATABASE_URL`]!)
      expect(url.port).toBe(published(`postgres-${service}`, 5432))
      expect(url.pathname).toBe(`/${service}_service`)
    }
    expect(new URL(env.AMQP_URL!).port).toBe(published('rabbitmq', 5672))
    expect(new URL(env.ORDER_SERVICE_URL!).port).toBe(published('order', 3001))
    expect(read('package.json')).toContain('--env-file=infra/compose/cli.env')
  })
})

describe('docker-compose.yml, stopping', () => {
  it('when a service is stopped, then Compose waits longer than its drain before it kills it', () => {
    // Compose durations as this file writes them: whole seconds.
    const seconds = (duration: string | undefined) => Number(/^(\d+)s$/.exec(duration ?? '')?.[1] ?? NaN)
    for (const service of SERVICES) {
      const s = compose.services[service]!
      const drainSeconds = Number(s.environment?.SHUTDOWN_TIMEOUT_MS) / 1000
      expect(drainSeconds, service).toBeGreaterThan(0)
      // The drain, then the exit (pools closed, spans flushed): at least 5 s of margin.
      expect(seconds(s.stop_grace_period), service).toBeGreaterThanOrEqual(drainSeconds + 5)
    }
  })
})

describe('infra/rabbitmq/definitions.json', () => {
  it("when compared with the cluster's policies, then it holds the same ones (leader spread, DLQ delivery limit)", () => {
    expect(definitions.policies).toEqual(brokerPolicies().map((p) => ({ vhost: 'saga', ...p })))
  })

  it('when compared with broker-users.ts, then each service has exactly the least-privilege permissions', () => {
    for (const u of brokerUsers()) {
      expect(definitions.permissions.find((p) => p.user === u.user)).toEqual({
        user: u.user,
        vhost: 'saga',
        ...u.permissions,
      })
      expect(definitions.topic_permissions.find((p) => p.user === u.user)).toEqual({
        user: u.user,
        vhost: 'saga',
        ...u.topic,
      })
    }
  })

  it('when imported into the local broker (names prefixed), then a service user logs in to the vhost', async () => {
    const id = randomBytes(3).toString('hex')
    const rename = (name: string) => `d${id}_${name}`
    const copy = {
      ...definitions,
      users: definitions.users.map((u) => ({ ...u, name: rename(u.name), tags: [] })),
      vhosts: [{ name: rename('saga') }],
      permissions: definitions.permissions.map((p) => ({
        ...p,
        user: rename(p.user),
        vhost: rename(p.vhost),
      })),
      topic_permissions: definitions.topic_permissions.map((p) => ({
        ...p,
        user: rename(p.user),
        vhost: rename(p.vhost),
      })),
      // The policies too: this broker (3.10 here) validates their keys and values on import.
      policies: definitions.policies.map((p) => ({ ...p, vhost: rename(p.vhost) })),
      exchanges: [],
    }
    const file = join(tmpdir(), `definitions-${id}.json`)
    writeFileSync(file, JSON.stringify(copy))
    try {
      await run('rabbitmqctl', ['-q', 'import_definitions', file])
      const order = definitions.users.find((u) => u.name === 'order-service')!
      const url = new URL(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672')
      url.username = rename(order.name)
      url.password = order.password
      url.pathname = `/${rename('saga')}`
      const connection = await amqp.connect(url.toString())
      await connection.close()
      const { stdout } = await run('rabbitmqctl', ['-q', 'list_user_permissions', rename(order.name)])
      expect(stdout).toContain(brokerUsers()[0]!.permissions.configure)
      const policies = await run('rabbitmqctl', ['-q', 'list_policies', '-p', rename('saga')])
      for (const p of definitions.policies) expect(policies.stdout).toContain(p.name)
    } finally {
      await run('rabbitmqctl', ['-q', 'delete_vhost', rename('saga')]).catch(() => undefined)
      await deleteBrokerUsers(definitions.users.map((u) => ({ user: rename(u.name) })))
    }
  })
})
