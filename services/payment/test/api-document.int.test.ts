import { fileURLToPath } from 'node:url'
import { clientModule, describeApiDocument, whenReady } from '@saga/testkit'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const start = (env: Record<string, string>) =>
  whenReady(buildApp(loadConfig(env), { fastify: { logger: false } }))

describeApiDocument('payment', start, {
  documentFile: fileURLToPath(new URL('../../../docs/openapi/payment.json', import.meta.url)),
  usage: clientModule(`
/** The order's captures, each with what was refunded of it, in minor units. */
export async function captured(orderId: string): Promise<number> {
  const { data } = await client.GET('/payments', { params: { query: { orderId } } })
  const payments: components['schemas']['Payment'][] = data?.items ?? []
  return payments
    .filter((p) => p.status === 'CAPTURED')
    .reduce((sum, p) => sum + p.amount - p.refunds.reduce((r, refund) => r + refund.amount, 0), 0)
}
export type Names = operations['listPayments']
`),
  misuse: {
    usage: `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'
await createClient<paths>().GET('/payments', { params: { query: { order: 'x' } } })
`,
    error: "'order' does not exist",
  },
})
