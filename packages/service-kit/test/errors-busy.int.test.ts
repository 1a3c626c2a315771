import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { z } from 'zod'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp, type ServiceApp } from '../src/app.js'
import { errorResponses } from '../src/error-schemas.js'
import { BUSY_RETRY_AFTER_S } from '../src/errors.js'

const adminUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'

// The shape Prisma throws when an interactive transaction cannot get a connection within maxWait
// (PrismaClientKnownRequestError, code P2028), as the e2e scale-out run saw it.
const prismaError = (code: string, message: string): Error =>
  Object.assign(new Error(message), { name: 'PrismaClientKnownRequestError', code, clientVersion: '7' })

let app: ServiceApp
let pool: pg.Pool
let held: pg.PoolClient
// A database whose connections are switched off, as for maintenance (ALLOW_CONNECTIONS false).
const closedDatabase = `kit_closed_${randomBytes(4).toString('hex')}`
const admin = async (sql: string) => {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  // One connection, held by the test: the next request for one times out, as in an exhausted pool.
  pool = new pg.Pool({ connectionString: adminUrl, max: 1, connectionTimeoutMillis: 100 })
  held = await pool.connect()
  await admin(`CREATE DATABASE ${closedDatabase} ALLOW_CONNECTIONS false`)
  app = await createServiceApp({ service: 'kit-busy', logLevel: 'silent' })
  // With the shared error schemas, so the 503 below is also checked through its response schema.
  app.get(
    '/pool',
    { schema: { response: { 200: z.object({ ok: z.boolean() }), ...errorResponses(500, 503) } } },
    async () => {
      const client = await pool.connect()
      client.release()
      return { ok: true }
    },
  )
  app.get('/prisma/:code', (request) => {
    const { code } = request.params as { code: string }
    throw prismaError(code, 'Transaction API error: Unable to start a transaction in the given time.')
  })
  app.get('/wrapped', () => {
    throw new Error('driver adapter failed', { cause: new Error('timeout exceeded when trying to connect') })
  })
  app.get('/closed', async () => {
    const client = new pg.Client({ connectionString: adminUrl.replace(/\/[^/]*$/, `/${closedDatabase}`) })
    client.on('error', () => undefined)
    await client.connect()
    await client.end()
    return { ok: true }
  })
  app.get('/bug', () => {
    throw new TypeError('cannot read properties of undefined')
  })
  await app.ready()
})

afterAll(async () => {
  await app?.close()
  held?.release()
  await pool?.end()
  await admin(`DROP DATABASE IF EXISTS ${closedDatabase}`)
})

const expectBusy = (res: Awaited<ReturnType<ServiceApp['inject']>>, requestId: string): void => {
  expect(res.statusCode).toBe(503)
  expect(res.headers['retry-after']).toBe(String(BUSY_RETRY_AFTER_S))
  expect(res.json()).toEqual({
    error: 'Service Unavailable',
    message: expect.stringContaining('busy') as unknown,
    requestId,
  })
}

describe('error handler and an overloaded database', () => {
  it('when the pg pool has no connection to give within its timeout, then 503 with Retry-After and the request id', async () => {
    const res = await app.inject({ method: 'GET', url: '/pool', headers: { 'x-request-id': 'busy-1' } })
    expectBusy(res, 'busy-1')
  })

  it.each(['P2028', 'P2024', 'P1001'])(
    'when Prisma fails with %s, then 503 with Retry-After, not 500',
    async (code) => {
      const res = await app.inject({
        method: 'GET',
        url: `/prisma/${code}`,
        headers: { 'x-request-id': code },
      })
      expectBusy(res, code)
    },
  )

  it('when the connection timeout is the cause of a wrapping error, then 503 too', async () => {
    const res = await app.inject({ method: 'GET', url: '/wrapped', headers: { 'x-request-id': 'wrapped' } })
    expectBusy(res, 'wrapped')
  })

  it('when the database does not accept connections now (ALLOW_CONNECTIONS false), then 503, not 500', async () => {
    const res = await app.inject({ method: 'GET', url: '/closed', headers: { 'x-request-id': 'closed' } })
    expectBusy(res, 'closed')
  })

  it('when a route fails for another reason, then still 500 without Retry-After', async () => {
    const res = await app.inject({ method: 'GET', url: '/bug', headers: { 'x-request-id': 'bug' } })
    expect(res.statusCode).toBe(500)
    expect(res.headers['retry-after']).toBeUndefined()
    expect(res.json()).toMatchObject({ error: 'Internal Server Error', requestId: 'bug' })
  })
})
