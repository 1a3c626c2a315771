import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AMQP_URL, deleteBrokerObjects, uniqueName } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serviceEnvSchema } from '../src/env.js'
import { sagaService } from '../src/saga-service.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

let db: ScratchDatabase
let migrationsDir: string
const exchange = uniqueName('sk_saga_ex')
const queuePrefix = uniqueName('sk_saga')

beforeAll(async () => {
  db = await createScratchDatabase('saga')
  // The service's migrations: messaging's own tables, as every service ships them.
  migrationsDir = await mkdtemp(join(tmpdir(), 'saga-service-'))
  await mkdir(join(migrationsDir, '20260101000000_messaging'))
  const messagingSql = createRequire(import.meta.url).resolve('@saga/messaging/sql/messaging.sql')
  await copyFile(messagingSql, join(migrationsDir, '20260101000000_messaging', 'migration.sql'))
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
