import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describeApiDocument, whenReady } from '@saga/testkit'
import { expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const docs = (file: string) => fileURLToPath(new URL(`../../../docs/${file}`, import.meta.url))

const orderBody = {
  customerId: '7f1c2a4e-3b5d-4e6f-8a9b-0c1d2e3f4a5b',
  currency: 'EUR',
  items: [{ sku: 'MUG-001', quantity: 2, unitPrice: 1250 }],
  shippingAddress: {
    name: 'Ada Lovelace',
    line1: '12 Engine St',
    city: 'London',
    postalCode: 'N1 9GU',
    country: 'GB',
  },
  paymentMethod: 'tok_visa',
}
const body = JSON.stringify(orderBody)

describeApiDocument(
  'order',
  (env) => whenReady(buildApp(loadConfig(env), { fastify: { logger: false } })),
  {
    documentFile: docs('openapi/order.json'),
    usage: `
import createClient from 'openapi-fetch'
import type { components, operations, paths } from './api.js'

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3001' })

/** Places an order (once, with a key), reads it back, cancels it; returns its final status. */
export async function placeReadCancel(): Promise<components['schemas']['OrderStatus'] | undefined> {
  const placed = await client.POST('/orders', { params: { header: { 'idempotency-key': 'k-1' } }, body: ${body} })
  if (placed.error) return undefined
  const id: string = placed.data.id
  const page = await client.GET('/orders', { params: { query: { status: 'PENDING', limit: 10 } } })
  const next: string | null | undefined = page.data?.nextCursor
  const stuck = await client.GET('/orders', {
    params: { query: { waitingFor: 'inventory', deadlineBefore: '2026-12-01T10:00:00Z', placedAfter: '2026-12-01T09:00:00Z' } },
  })
  const step: 'payment' | 'inventory' | 'shipment' | null | undefined = stuck.data?.items[0]?.waitingFor
  const stats = await client.GET('/orders/stats', { params: { query: { windowSeconds: 300 } } })
  const overdue: number | undefined = stats.data?.pendingOverdue
  const p99: number | null | undefined = stats.data?.buckets[0]?.latencyP99Ms
  if (step === undefined && overdue === undefined && p99 === undefined) return undefined
  await client.GET('/orders/{id}', { params: { path: { id } } })
  const cancelled = await client.POST('/orders/{id}/cancel', { params: { path: { id } } })
  return next === undefined ? undefined : cancelled.data?.status
}

// The operations have names, and the documented headers have types.
type Created = operations['createOrder']['responses'][201]
export const headers: Created['headers'] = { location: '/orders/1', 'x-request-id': 'r-1', 'idempotent-replayed': 'true' }
export const busy: operations['listOrders']['responses'][503]['headers']['retry-after'] = 2
export const problem: components['schemas']['ClientError'] = { error: 'Bad Request', message: 'invalid', details: [{ path: 'body.currency', issue: 'is invalid' }] }
export type Names = [operations['getOrder'], operations['cancelOrder'], operations['listOrders'], operations['getOrderStats']]

// What is null on a PENDING order is nullable in the generated types (this compiles only then).
type Order = components['schemas']['Order']
export const nullable: [null extends Order['failedStep'] ? 1 : 0, null extends Order['waitingFor'] ? 1 : 0, null extends Order['deadlineAt'] ? 1 : 0] = [1, 1, 1]
`,
    misuse: {
      usage: `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'
const { paymentMethod: _, ...withoutPayment } = ${body}
await createClient<paths>().POST('/orders', { body: withoutPayment })
`,
      error: "Property 'paymentMethod' is missing",
    },
    heyApiUsage: `
import type { Order, OrderSummary } from './api.js'
// What is null on a PENDING order is nullable in the generated types (this compiles only then).
export const nullable: [
  null extends Order['failedStep'] ? 1 : 0,
  null extends Order['waitingFor'] ? 1 : 0,
  null extends Order['deadlineAt'] ? 1 : 0,
  null extends OrderSummary['failedStep'] ? 1 : 0,
] = [1, 1, 1, 1]
`,
    // A PENDING order (failedStep, waitingFor and more null), a page, the stats and a cancel.
    async exercise(send) {
      const json = { 'content-type': 'application/json' }
      const placed = (await send({
        method: 'POST',
        url: '/orders',
        payload: orderBody,
        headers: { ...json, 'idempotency-key': 'api-document-1' },
      })) as { id: string }
      await send({ method: 'GET', url: `/orders/${placed.id}` })
      await send({ method: 'GET', url: '/orders?status=PENDING&limit=10' })
      await send({ method: 'GET', url: '/orders/stats?windowSeconds=300' })
      await send({ method: 'POST', url: `/orders/${placed.id}/cancel` })
      await send({ method: 'GET', url: `/orders/${placed.id}` })
    },
  },
  (get) => {
    it('when the AsyncAPI document is asked for, then the order service serves the checked-in docs/asyncapi.json', async () => {
      const res = await get().app.inject({ method: 'GET', url: '/asyncapi.json' })
      expect(res.statusCode).toBe(200)
      expect(res.json()).toEqual(JSON.parse(readFileSync(docs('asyncapi.json'), 'utf8')))
    })
  },
)
