import { startServiceUnderTest, type ServiceUnderTest } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

let s: ServiceUnderTest<Awaited<ReturnType<typeof buildApp>>>

beforeAll(async () => {
  s = await startServiceUnderTest('shipment', async (env) => {
    const app = await buildApp(loadConfig(env), { fastify: { logger: false } })
    await app.ready()
    return app
  })
})

afterAll(async () => {
  await s?.close()
})

describe('shipment service health', () => {
  it('when booted on a fresh database, then migrations ran and ready is 200 with every dependency up', async () => {
    const { statusCode, body } = await s.readyUntil((code) => code === 200)
    expect(statusCode).toBe(200)
    expect(body.checks).toMatchObject({
      database: { status: 'up' },
      broker: { status: 'up' },
      outbox: { status: 'up' },
    })
    const { rows } = await s.db.pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations',
    )
    expect(rows.map((r) => r.migration_name)).toContain('20261129000000_messaging')
  })

  it('when the OpenAPI document and metrics are requested, then both are served', async () => {
    const doc = await s.app.inject({ method: 'GET', url: '/documentation/json' })
    expect(doc.statusCode).toBe(200)
    expect(doc.json<{ openapi: string }>().openapi).toMatch(/^3\./)
    const metrics = await s.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toContain('saga_messaging_broker_up{service="shipment"} 1')
  })
})
