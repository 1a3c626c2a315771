import pg from 'pg'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createServiceApp, type ServiceApp } from '../src/app.js'
import { errorResponses } from '../src/error-schemas.js'
import { HttpError } from '../src/errors.js'
import { databaseCheck, healthPlugin, messagingChecks } from '../src/health.js'
import type { HealthArea, HealthAreaName, MessagingHealth, MessagingStats } from '@saga/messaging/parts'
import { createSignals, messagingMetrics } from '@saga/messaging/parts'
import { testStats } from '@saga/messaging/testing'
import { metricsPlugin } from '../src/metrics.js'
import { createScratchDatabase, type ScratchDatabase } from './support/database.js'

// A stand-in for the messaging facade: the broker/outbox/consumer state is the test's input here,
// reported as @saga/messaging's health areas and read by its own metric descriptors; the real broker
// is exercised in the services' tests.
const status = {
  broker: true,
  oldestPendingAgeMs: 0,
  consuming: true,
  consumerStuck: false,
  publishedTotal: 7,
}
const area = (
  name: HealthAreaName,
  state: HealthArea['status'],
  detail: string,
  facts: HealthArea['facts'] = {},
): HealthArea => ({
  area: name,
  ok: state === 'up',
  status: state,
  probe: name === 'consumer' ? 'liveness' : 'report',
  detail,
  facts,
})
const messaging = {
  health: (): MessagingHealth => {
    const areas = [
      area(
        'broker',
        status.broker ? 'up' : 'down',
        status.broker ? 'every connection open' : 'relay connection down',
      ),
      area('outbox', status.oldestPendingAgeMs > 10_000 ? 'down' : 'up', 'oldest pending row is too old', {
        oldestPendingAgeMs: status.oldestPendingAgeMs,
      }),
      area(
        'consumer',
        status.consuming ? 'up' : status.consumerStuck ? 'down' : 'degraded',
        status.consuming ? 'consuming 2 queues' : 'not consuming every queue',
      ),
    ]
    return { ok: areas.every((a) => a.ok), areas }
  },
}
const stats = (): MessagingStats =>
  testStats({
    relay: { oldestPendingAgeMs: 2500, publishedTotal: status.publishedTotal },
    consumer: {
      duplicatesTotal: 5,
      byHandler: { 'reserve-stock': { duplicatesTotal: 2 }, 'release-stock': { duplicatesTotal: 3 } },
    },
  })
const descriptors = messagingMetrics('saga_messaging', {
  stats,
  health: messaging.health,
  signals: createSignals(),
  recorders: false,
})

let db: ScratchDatabase
let pool: pg.Pool
let app: ServiceApp

const thingBody = z.object({
  name: z.string().min(1),
  lines: z.array(z.object({ qty: z.number().int().positive() })),
})

beforeAll(async () => {
  db = await createScratchDatabase('app')
  pool = new pg.Pool({ connectionString: db.url, max: 2 })
  app = await createServiceApp({ service: 'kit-test', logLevel: 'silent', bodyLimit: 1_024 })
  await app.register(healthPlugin, {
    checks: [databaseCheck(pool), ...messagingChecks(messaging)],
  })
  await app.register(metricsPlugin, { service: 'kit-test', metrics: descriptors })
  app.post(
    '/things',
    {
      schema: {
        body: thingBody,
        // The error schemas serialise the error handler's bodies: the tests below check they pass unchanged.
        response: {
          200: z.object({ received: z.string() }),
          ...errorResponses(400, 413, 415, 500, 503),
        },
      },
    },
    (request) => ({ received: request.body.name }),
  )
  // The same route without error schemas: its error bodies are what the handler sends unserialised.
  app.post(
    '/plain-things',
    { schema: { body: thingBody, response: { 200: z.object({ received: z.string() }) } } },
    (request) => ({ received: request.body.name }),
  )
  app.get('/missing', { schema: { response: errorResponses(404, 500) } }, () => {
    throw new HttpError(404, 'thing 42 not found')
  })
  app.get('/boom', { schema: { response: errorResponses(404, 500) } }, () => {
    throw new Error('password=hunter2 in a stack')
  })
  await app.ready()
})

afterAll(async () => {
  await app.close()
  await pool.end()
  await db.drop()
})

describe('error handler', () => {
  it('when the body fails the zod schema, then 400 lists each path and issue', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/things',
      payload: { name: '', lines: [{ qty: 0 }] },
    })
    expect(res.statusCode).toBe(400)
    const body = res.json<{ error: string; details: Array<{ path: string; issue: string }> }>()
    expect(body.error).toBe('Bad Request')
    expect(body.details.map((d) => d.path).sort()).toEqual(['body.lines.0.qty', 'body.name'])
    expect(body.details.every((d) => d.issue.length > 0)).toBe(true)
  })

  it('when the body is larger than the limit, then 413 in the same shape', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/things',
      payload: { name: 'x'.repeat(2_000), lines: [] },
    })
    expect(res.statusCode).toBe(413)
    expect(res.json()).toMatchObject({ error: 'Payload Too Large', details: [] })
  })

  it('when the body is not JSON, then 415 in the same shape', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/xml' },
      payload: '<name>x</name>',
    })
    expect(res.statusCode).toBe(415)
    expect(res.json()).toEqual({
      error: 'Unsupported Media Type',
      message: "The body's media type 'application/xml' is not supported; send application/json",
      details: [{ path: 'headers.content-type', issue: 'must be application/json' }],
    })
  })

  it.each([
    ['invalid', { payload: { name: '', lines: [{ qty: 0 }], extra: 1 } }],
    ['too large', { payload: { name: 'x'.repeat(2_000), lines: [] } }],
    ['not JSON', { headers: { 'content-type': 'application/xml' }, payload: '<a/>' }],
  ] as const)(
    'when a %s body reaches a route with errorResponses, then the error body equals the one without',
    async (_case, request) => {
      const withSchemas = await app.inject({ method: 'POST', url: '/things', ...request })
      const without = await app.inject({ method: 'POST', url: '/plain-things', ...request })
      expect(withSchemas.statusCode).toBeGreaterThanOrEqual(400)
      expect(withSchemas.statusCode).toBe(without.statusCode)
      expect(withSchemas.json()).toEqual(without.json())
      expect(withSchemas.json<{ details: unknown[] }>().details).toBeInstanceOf(Array)
    },
  )

  it('when a route throws an HttpError, then its status and message are returned', async () => {
    const res = await app.inject({ method: 'GET', url: '/missing' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: 'Not Found', message: 'thing 42 not found', details: [] })
  })

  it('when a route throws unexpectedly, then 500 hides the message and carries the request id', async () => {
    const res = await app.inject({ method: 'GET', url: '/boom', headers: { 'x-request-id': 'req-123' } })
    expect(res.statusCode).toBe(500)
    expect(res.body).not.toContain('hunter2')
    expect(res.json()).toMatchObject({ error: 'Internal Server Error', requestId: 'req-123' })
    expect(res.headers['x-request-id']).toBe('req-123')
  })

  it('when no route matches, then 404 in the 4xx shape', async () => {
    const res = await app.inject({ method: 'GET', url: '/nowhere?x=1' })
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({ error: 'Not Found', message: 'Route GET /nowhere not found', details: [] })
  })
})

describe('health', () => {
  /** GETs `url` from `target` (the kit's app unless told) and expects `statusCode` and a body matching `body`. */
  const expectHealth = async (
    url: string,
    statusCode: number,
    body: object,
    target: Pick<FastifyInstance, 'inject'> = app,
  ) => {
    const res = await target.inject({ method: 'GET', url })
    expect(res.statusCode, url).toBe(statusCode)
    expect(res.json()).toMatchObject(body)
  }

  it('when the database and broker are up, then ready is 200 naming each check', async () => {
    status.broker = true
    await expectHealth('/health/ready', 200, {
      status: 'ready',
      checks: { database: { status: 'up' }, broker: { status: 'up' }, outbox: { status: 'up' } },
    })
  })

  it('when the broker is down or the outbox too old, then ready and live stay 200 and /health reports them', async () => {
    status.broker = false
    status.oldestPendingAgeMs = 20_000
    try {
      await expectHealth('/health/ready', 200, {
        status: 'ready',
        checks: {
          database: { status: 'up', role: 'ready' },
          broker: { status: 'down', role: 'report' },
          outbox: { status: 'down', role: 'report', oldestPendingAgeMs: 20_000 },
        },
      })
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
      await expectHealth('/health', 200, { status: 'degraded', live: true, ready: true })
    } finally {
      status.broker = true
      status.oldestPendingAgeMs = 0
    }
  })

  it('when a consumer stopped consuming, then /health says degraded with the reason and live stays 200 within the grace', async () => {
    status.consuming = false
    try {
      await expectHealth('/health/live', 200, {
        status: 'live',
        checks: { consumer: { status: 'degraded', error: 'not consuming every queue' } },
      })
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)
      expect((await app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({
        status: 'degraded',
      })
    } finally {
      status.consuming = true
    }
  })

  it('when messaging says a consumer is stuck for good (its area down, probe liveness), then the consumer check is down with role live and /health/live is 503', async () => {
    const consumer = messagingChecks(messaging).find((c) => c.name === 'consumer')!
    expect(consumer.role).toBe('live')
    status.consuming = false
    try {
      expect((await consumer.check()).status).toBe('degraded')
      status.consumerStuck = true
      expect(await consumer.check()).toMatchObject({ status: 'down', error: 'not consuming every queue' })
      await expectHealth('/health/live', 503, {
        status: 'not live',
        checks: { consumer: { status: 'down' } },
      })
      status.consuming = true
      expect((await consumer.check()).status).toBe('up')
    } finally {
      status.consuming = true
      status.consumerStuck = false
    }
  })

  it('when a live check is down, then /health/live is 503 naming it', async () => {
    const stuck = Fastify({ logger: false })
    await stuck.register(healthPlugin, {
      checks: [
        { name: 'consumer', role: 'live', check: () => Promise.resolve({ status: 'down', error: 'stuck' }) },
      ],
    })
    try {
      await expectHealth(
        '/health/live',
        503,
        { status: 'not live', checks: { consumer: { status: 'down', error: 'stuck' } } },
        stuck,
      )
      expect((await stuck.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200)
    } finally {
      await stuck.close()
    }
  })

  it('when the database cannot be reached, then the database check is down with the reason', async () => {
    const unreachable = new pg.Pool({
      connectionString: 'postgresql://postgres@127.0.0.1:1/postgres',
      max: 1,
    })
    try {
      const result = await databaseCheck(unreachable, 500).check()
      expect(result.status).toBe('down')
      expect(String(result.error)).toMatch(/ECONNREFUSED|did not answer/)
    } finally {
      await unreachable.end()
    }
  })
})

describe('metrics and documentation', () => {
  it('when scraped, then default, http and messaging series are in Prometheus text', async () => {
    await app.inject({ method: 'GET', url: '/health/live' })
    status.publishedTotal = 9
    const res = await app.inject({ method: 'GET', url: '/metrics' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toContain('text/plain')
    expect(res.body).toContain('process_cpu_user_seconds_total{saga_service="kit-test"}')
    expect(res.body).toMatch(
      /http_request_duration_seconds_count\{saga_service="kit-test",method="GET",route="\/health\/live",status_code="200"\} \d+/,
    )
    expect(res.body).toContain('saga_messaging_relay_published_total{saga_service="kit-test"} 9')
    expect(res.body).toContain('saga_messaging_relay_oldest_pending_age_seconds{saga_service="kit-test"} 2.5')
    expect(res.body).toContain('saga_messaging_consuming{saga_service="kit-test"} 1')
    // Prometheus Operator's targets carry `service`; a scraped `service` would become `exported_service`.
    expect(res.body).not.toMatch(/[{,]service="/)
    expect(res.body).toMatch(
      /# HELP saga_messaging_relay_oldest_pending_age_seconds .*aggregate with max by \(job\), never sum/,
    )
    expect(res.body).toContain(
      'saga_messaging_consumer_duplicates_total{handler="reserve-stock",saga_service="kit-test"} 2',
    )
    expect(res.body).toContain(
      'saga_messaging_consumer_duplicates_total{handler="release-stock",saga_service="kit-test"} 3',
    )
  })

  it('when scraped, then the text has no blank lines and no HELP that only repeats a name', async () => {
    const res = await app.inject({ method: 'GET', url: '/metrics' })
    const lines = res.body.trimEnd().split('\n')
    expect(lines.filter((line) => line.trim() === '')).toEqual([])
    const helps = lines.filter((line) => line.startsWith('# HELP saga_messaging_'))
    expect(helps.length).toBeGreaterThanOrEqual(3)
    for (const help of helps) {
      const [, , name, ...words] = help.split(' ')
      expect(words.join(' ')).not.toContain(name!.replace(/^saga_messaging_/, ''))
      expect(words.join(' ')).not.toMatch(/_ms\b|@saga\/messaging [a-z_]+$/)
    }
    // A handler's name is a label, never part of a metric name.
    expect(res.body).not.toMatch(/^saga_messaging_[a-z_]*(reserve|release)_stock/m)
  })

  it('when the OpenAPI document is requested, then it lists the zod-typed route', async () => {
    const res = await app.inject({ method: 'GET', url: '/documentation/json' })
    expect(res.statusCode).toBe(200)
    const doc = res.json<{ openapi: string; paths: Record<string, unknown> }>()
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths)).toContain('/things')
    expect(Object.keys(doc.paths)).not.toContain('/health/ready')
  })

  it('when a route declares errorResponses, then the document lists each error, referencing the shared error bodies and headers', async () => {
    const res = await app.inject({ method: 'GET', url: '/documentation/json' })
    type Response = {
      description: string
      headers: Record<string, { $ref: string }>
      content: Record<string, { schema: { allOf?: { $ref: string }[] } }>
    }
    const doc = res.json<{
      paths: Record<string, { post: { responses: Record<string, Response> } }>
      components: { schemas: Record<string, { required?: string[] }>; headers: Record<string, unknown> }
    }>()
    const responses = doc.paths['/things']!.post.responses
    expect(Object.keys(responses).sort()).toEqual(['200', '400', '413', '415', '500', '503'])
    expect(responses['400']!.description).toMatch(/invalid/)
    const body = (status: string) => responses[status]!.content['application/json']!.schema.allOf?.[0]?.$ref
    expect(body('400')).toBe('#/components/schemas/ClientError')
    expect(body('503')).toBe('#/components/schemas/ServerError')
    expect(doc.components.schemas.ClientError?.required).toEqual(['error', 'message', 'details'])
    expect(doc.components.schemas.ServerError?.required).toEqual(['error', 'message', 'requestId'])
    // Every response names x-request-id; a 503 names Retry-After too; both are components.
    for (const response of Object.values(responses))
      expect(response.headers['x-request-id']).toEqual({ $ref: '#/components/headers/RequestId' })
    expect(responses['503']!.headers['retry-after']).toEqual({ $ref: '#/components/headers/RetryAfter' })
    // Only the header components some response uses stay (openapi-strict.ts drops the others).
    expect(Object.keys(doc.components.headers).sort()).toEqual(['RequestId', 'RetryAfter'])
  })
})
