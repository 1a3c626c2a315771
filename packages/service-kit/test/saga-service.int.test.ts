import { randomUUID } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AMQP_URL, deleteBrokerObjects, eventually, uniqueName } from '@saga/testkit'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serviceEnvSchema } from '../src/env.js'
import { sagaService } from '../src/saga-service.js'
import { ownBrokerConnections } from './support/broker-connections.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

let db: ScratchDatabase
let migrationsDir: string
const exchange = uniqueName('sk_saga_ex')
const queuePrefix = uniqueName('sk_saga')

beforeAll(async () => {
  db = await createScratchDatabase('saga')
  // The service's migrations: messaging's own tables and the admin's, as every service ships them.
  migrationsDir = await mkdtemp(join(tmpdir(), 'saga-service-'))
  const resolve = createRequire(import.meta.url).resolve
  const shipped = {
    '20260101000000_messaging': resolve('@saga/messaging/sql/messaging.sql'),
    '20260101000001_messaging_admin': resolve('@saga/messaging-admin/sql/messaging-admin.sql'),
  }
  for (const [folder, sql] of Object.entries(shipped)) {
    await mkdir(join(migrationsDir, folder))
    await copyFile(sql, join(migrationsDir, folder, 'migration.sql'))
  }
})

afterAll(async () => {
  await db.drop()
  await rm(migrationsDir, { recursive: true, force: true })
  await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
})

describe('sagaService', () => {
  it('when built, then each step of the service runs in load order with its deps, and health checks the schema', async () => {
    const config = serviceEnvSchema({ service: 'payment', port: 0 }).parse({
      DATABASE_URL: db.url,
      AMQP_URL,
      AMQP_EXCHANGE: exchange,
      AMQP_QUEUE_PREFIX: queuePrefix,
      LOG_LEVEL: 'silent',
      MIGRATE_ON_START: 'true',
    })
    const seen: string[] = []
    let disconnected = false
    const app = await sagaService({
      service: 'payment',
      config,
      fastify: { logger: false },
      database: {
        migrationsDir,
        createClient: () => ({
          $disconnect: () => {
            disconnected = true
            return Promise.resolve()
          },
        }),
      },
      deps: { extra: 'given' },
      beforeMessaging: (step) => {
        seen.push(`before: pool ${step.hasDecorator('pool')}, messaging ${step.hasDecorator('messaging')}`)
        return Promise.resolve()
      },
      reactions: (deps) => {
        seen.push(`reactions: ${deps.extra}, clock ${deps.clock() instanceof Date}`)
        return []
      },
      recorders: (deps) => {
        seen.push(`recorders: ${deps.extra}`)
        return []
      },
      afterMessaging: (step) => {
        seen.push(
          `after: messaging ${step.hasDecorator('messaging')}, metrics ${step.hasDecorator('metricsRegistry')}`,
        )
        return Promise.resolve()
      },
      routes: async (step) => {
        seen.push(`routes: metrics ${step.hasDecorator('metricsRegistry')}`)
        await step.register((scope, _options, done) => {
          scope.get('/own', () => Promise.resolve({ own: true }))
          done()
        })
      },
    })
    try {
      await app.ready()
      expect(seen).toEqual([
        'before: pool true, messaging false',
        'reactions: given, clock true',
        'recorders: given',
        'after: messaging true, metrics false',
        'routes: metrics true',
      ])
      expect((await app.inject({ url: '/own' })).json()).toEqual({ own: true })
      const ready = await app.inject({ url: '/health/ready' })
      const checks = ready.json<{ checks: Record<string, { status: string }> }>().checks
      expect(checks.database?.status).toBe('up')
      expect(checks.schema?.status).toBe('up')
      expect(Object.keys(checks)).toEqual(expect.arrayContaining(['broker', 'outbox', 'consumer']))
      const metrics = await app.inject({ url: '/metrics' })
      expect(metrics.body).toContain('saga_service="payment"')
      expect(metrics.body).toContain('saga_messaging_')
    } finally {
      await app.close()
    }
    expect(disconnected).toBe(true)
  })
})

const TOKEN = 'sk-admin-token-0123456789abcdef'
/** The payment service as sagaService builds it, with no reactions and no routes of its own, and `env`. */
const build = (env: Record<string, string>) =>
  sagaService({
    service: 'payment',
    config: serviceEnvSchema({ service: 'payment', port: 0 }).parse({
      DATABASE_URL: db.url,
      AMQP_URL,
      AMQP_EXCHANGE: exchange,
      AMQP_QUEUE_PREFIX: queuePrefix,
      LOG_LEVEL: 'silent',
      ...env,
    }),
    fastify: { logger: false },
    database: { migrationsDir, createClient: () => ({ $disconnect: () => Promise.resolve() }) },
    reactions: () => [],
    routes: () => Promise.resolve(),
  })
/** A `POST /admin/messaging/parked/retry` (by default a dry run of one id), with `token` as bearer when given. */
const retry = (
  token?: string,
  payload = { ids: ['8f0c2f43-3d38-4a57-9a43-0b6b1e0c0a11'], dryRun: true },
) => ({
  method: 'POST' as const,
  url: '/admin/messaging/parked/retry',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  payload,
})

describe('sagaService on a cluster', () => {
  it('when AMQP_URL lists two nodes and one is dead, then the service connects through the other and its readiness body names that node', async () => {
    const live = new URL(AMQP_URL)
    const app = await build({ AMQP_URL: `amqp://guest:guest@127.0.0.1:1 , ${AMQP_URL}` })
    try {
      await app.ready()
      const broker = async () =>
        (await app.inject({ url: '/health/ready' })).json<{
          checks: Record<string, Record<string, unknown>>
        }>().checks.broker
      await eventually('the relay connected', async () => (await broker())?.status === 'up')
      expect(await broker()).toMatchObject({
        relayBroker: `${live.hostname}:${live.port || '5672'}`,
        consumerBroker: null,
        brokerCluster: expect.stringMatching(/./) as unknown,
      })
    } finally {
      await app.close()
    }
  })
})

describe('sagaService admin surface', () => {
  it('when ADMIN_TOKEN is set, then the admin routes answer, and refusals are in the error shape', async () => {
    const app = await build({ ADMIN_TOKEN: TOKEN })
    try {
      const summary = await app.inject({ url: '/admin/messaging/summary' })
      expect(summary.statusCode).toBe(200)
      expect(summary.json()).toMatchObject({
        service: 'payment',
        outbox: { pending: 0, parked: 0 },
        queues: [],
      })
      const unauthorized = await app.inject(retry())
      expect(unauthorized.statusCode).toBe(401)
      expect(unauthorized.headers['www-authenticate']).toBe('Bearer')
      expect(unauthorized.json()).toEqual({
        error: 'Unauthorized',
        message: 'admin writes need Authorization: Bearer <ADMIN_TOKEN>',
        details: [{ path: 'headers.authorization', issue: 'is missing' }],
      })
      const invalid = await app.inject(retry(TOKEN, { ids: ['nope'], dryRun: true }))
      expect(invalid.statusCode).toBe(400)
      expect(invalid.json()).toMatchObject({ error: 'Bad Request', details: [{ path: 'body.ids.0' }] })
      const done = await app.inject(retry(TOKEN))
      expect(done.json()).toMatchObject({
        dryRun: true,
        actionId: null,
        results: [{ outcome: 'not-parked' }],
      })
      const inbox = await app.inject({
        url: `/admin/messaging/inbox?messageId=${randomUUID()}&messageId=${randomUUID()}`,
      })
      expect(inbox.json()).toEqual({ service: 'payment', inbox: [] })
      const document = await app.inject({ url: '/documentation/json' })
      expect(Object.keys(document.json<{ paths: object }>().paths)).toContain(
        '/admin/messaging/dead-letters/requeue',
      )
    } finally {
      await app.close()
    }
  })

  it('when ADMIN_TOKEN is unset, then admin writes are 403 and reads answer', async () => {
    const app = await build({})
    try {
      const refused = await app.inject(retry(TOKEN))
      expect(refused.statusCode).toBe(403)
      expect(refused.json()).toMatchObject({
        error: 'Forbidden',
        message: 'admin writes are disabled: set ADMIN_TOKEN',
      })
      expect((await app.inject({ url: '/admin/messaging/actions' })).json()).toEqual({
        service: 'payment',
        actions: [],
      })
    } finally {
      await app.close()
    }
  })

  it('when ADMIN_TOKEN is shorter than 16 characters, then the environment does not parse', () => {
    const parsed = serviceEnvSchema({ service: 'payment', port: 0 }).safeParse({ ADMIN_TOKEN: 'short' })
    expect(parsed.error?.issues[0]?.path).toEqual(['ADMIN_TOKEN'])
  })
})

describe('sagaService admin, built from the messaging options', () => {
  it("when a parked row is retried, then the admin, built from the messaging options, wakes the relays on the service's channel and records the retry", async () => {
    const app = await build({ ADMIN_TOKEN: TOKEN })
    const listener = new pg.Client({ connectionString: db.url })
    await listener.connect()
    try {
      // The fleet's wake-up channel (FLEET_MESSAGING_NAMES), not the package's default `outbox`.
      const woken = new Promise<string | undefined>((resolve) =>
        listener.on('notification', (n) => resolve(n.payload)),
      )
      await listener.query('LISTEN saga_outbox')
      const id = randomUUID()
      await listener.query(
        `INSERT INTO outbox_message (id, type, routing_key, payload, attempts, last_error, failed_at)
         VALUES ($1, 'parked.v1', 'parked', '{}', 10, 'refused', now())`,
        [id],
      )
      const res = await app.inject({
        ...retry(TOKEN, { ids: [id], dryRun: false }),
        headers: { ...retry(TOKEN).headers, 'x-admin-actor': 'ops@test' },
      })
      expect(res.json()).toMatchObject({ dryRun: false, results: [{ id, outcome: 'retried' }] })
      expect(await woken).toBe('payment-admin')
      const { actions } = (await app.inject({ url: '/admin/messaging/actions?limit=1' })).json<{
        actions: unknown[]
      }>()
      expect(actions).toEqual([
        expect.objectContaining({
          actor: 'ops@test',
          action: 'parked.retry',
          target: 'outbox_message',
          ids: [id],
        }),
      ])
    } finally {
      // The next tests expect an empty outbox and no recorded action.
      await listener.query('DELETE FROM outbox_message; DELETE FROM messaging_admin_action')
      await listener.end()
      await app.close()
    }
  })

  it("when the app closes, then the admin's broker connection, opened by its first summary, is closed", async () => {
    const app = await build({ ADMIN_TOKEN: TOKEN })
    try {
      expect(await ownBrokerConnections('payment-admin')).toBe(0)
      expect((await app.inject({ url: '/admin/messaging/summary' })).json()).toMatchObject({
        broker: 'connected',
      })
      expect(await ownBrokerConnections('payment-admin')).toBe(1)
    } finally {
      await app.close()
    }
    expect(await ownBrokerConnections('payment-admin')).toBe(0)
  })
})
