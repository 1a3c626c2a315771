import {
  createTestDatabase,
  deleteBrokerObjects,
  AMQP_URL,
  TcpProxy,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

type App = Awaited<ReturnType<typeof buildApp>>
interface Ready {
  status: string
  checks: Record<string, { status: string }>
}

let db: TestDatabase
let pgProxy: TcpProxy
let amqpProxy: TcpProxy
let app: App
const exchange = uniqueName('health_ex')
const queuePrefix = uniqueName('health_shipment')

/** Polls /health/ready until `accept` holds or 15 s pass; returns the last answer. */
async function readyUntil(accept: (statusCode: number, body: Ready) => boolean) {
  const deadline = Date.now() + 15_000
  for (;;) {
    const res = await app.inject({ method: 'GET', url: '/health/ready' })
    const body = res.json<Ready>()
    if (accept(res.statusCode, body) || Date.now() > deadline) return { statusCode: res.statusCode, body }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'health_shipment' })
  const dbUrl = new URL(db.url)
  const amqpUrl = new URL(AMQP_URL)
  pgProxy = await TcpProxy.start(dbUrl.hostname, Number(dbUrl.port || 5432))
  amqpProxy = await TcpProxy.start(amqpUrl.hostname, Number(amqpUrl.port || 5672))
  const config = loadConfig({
    DATABASE_URL: pgProxy.url(db.url),
    AMQP_URL: amqpProxy.url(AMQP_URL),
    AMQP_EXCHANGE: exchange,
    AMQP_QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'silent',
    PORT: '0',
  })
  app = await buildApp(config, { fastify: { logger: false } })
  await app.ready()
})

afterAll(async () => {
  await app?.close()
  await pgProxy?.close()
  await amqpProxy?.close()
  await deleteBrokerObjects({ prefix: queuePrefix, exchanges: [exchange] })
  await db?.drop()
})

describe('shipment service health', () => {
  it('when booted on a fresh database, then migrations ran and ready is 200 with every dependency up', async () => {
    const { statusCode, body } = await readyUntil((code) => code === 200)
    expect(statusCode).toBe(200)
    expect(body.checks).toMatchObject({
      database: { status: 'up' },
      broker: { status: 'up' },
      outbox: { status: 'up' },
    })
    const { rows } = await db.pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations',
    )
    expect(rows.map((r) => r.migration_name)).toContain('20261129000000_messaging')
  })

  it('when the OpenAPI document and metrics are requested, then both are served', async () => {
    const doc = await app.inject({ method: 'GET', url: '/documentation/json' })
    expect(doc.statusCode).toBe(200)
    expect(doc.json<{ openapi: string }>().openapi).toMatch(/^3\./)
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toContain('saga_messaging_broker_up{service="shipment"} 1')
  })
})
