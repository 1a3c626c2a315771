import { startPrivatePostgres, type PrivatePostgres, type ServiceUnderTest } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outageProbe, startOrderUnderTest, type OrderApp } from './support/outage.js'

// A restart of PostgreSQL cuts every session on the server, so this file restarts a server of its
// own (startPrivatePostgres: about a second to make), never the one other tests share.
let server: PrivatePostgres
let s: ServiceUnderTest<OrderApp>
const { placeUnderFault, recovered, expectOnly201Or503 } = outageProbe(() => s)

beforeAll(async () => {
  server = await startPrivatePostgres()
  s = await startOrderUnderTest(server.url)
})

afterAll(async () => {
  await s?.close()
  await server?.stop()
})

describe('the order service when PostgreSQL restarts', () => {
  it('when PostgreSQL restarts under load, then every answer is 201 or 503 with Retry-After, and it recovers', async () => {
    const outcomes = await placeUnderFault(80, 4, 20, () => server.restart())
    await expectOnly201Or503('PostgreSQL restarted', outcomes)
    expect((await recovered()).status).toBe(201)
  })
})
