import { startServiceUnderTest, type ServiceUnderTest } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

let s: ServiceUnderTest<Awaited<ReturnType<typeof buildApp>>>

beforeAll(async () => {
  s = await startServiceUnderTest('order', async (env) => {
    const app = await buildApp(loadConfig(env), { fastify: { logger: false } })
    await app.ready()
    return app
  })
})

afterAll(async () => {
  await s?.close()
})

describe('order service health', () => {
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
    expect(metrics.body).toContain('saga_messaging_broker_up{service="order"} 1')
  })

  it('when the broker link is cut, then ready stays 200 (orders are still accepted into the outbox), the broker is reported down, live stays 200, and the report recovers', async () => {
    s.amqpProxy.cut()
    const down = await s.readyUntil((_code, body) => body.checks.broker?.status === 'down')
    expect(down.statusCode).toBe(200)
    expect(down.body.checks).toMatchObject({ broker: { status: 'down' }, database: { status: 'up' } })
    expect((await s.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)

    s.amqpProxy.restore()
    const up = await s.readyUntil((code, body) => code === 200 && body.checks.broker?.status === 'up')
    expect(up.body.checks.broker?.status).toBe('up')
  })

  it('when the database link is cut, then ready is 503 naming the database, live stays 200, and ready recovers', async () => {
    s.pgProxy.cut()
    const down = await s.readyUntil((code, body) => code === 503 && body.checks.database?.status === 'down')
    expect(down.statusCode).toBe(503)
    expect(down.body.checks.database?.status).toBe('down')
    expect((await s.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)

    s.pgProxy.restore()
    const up = await s.readyUntil((code) => code === 200)
    expect(up.statusCode).toBe(200)
  })
})
