import { fileURLToPath } from 'node:url'
import { clientModule, describeApiDocument, whenReady } from '@saga/testkit'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const start = (env: Record<string, string>) =>
  whenReady(buildApp(loadConfig(env), { fastify: { logger: false } }))

describeApiDocument('shipment', start, {
  documentFile: fileURLToPath(new URL('../../../docs/openapi/shipment.json', import.meta.url)),
  usage: clientModule(`
/** The tracking numbers of an order's shipments that were not cancelled. */
export async function tracking(orderId: string): Promise<string[]> {
  const { data } = await client.GET('/shipments', { params: { query: { orderId } } })
  const shipments: components['schemas']['Shipment'][] = data?.items ?? []
  return shipments.filter((s) => s.status === 'CREATED').map((s) => s.trackingNumber)
}
export type Names = operations['listShipments']
`),
  misuse: {
    usage: `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'
await createClient<paths>().GET('/shipments', { params: { query: {} } })
`,
    error: "Property 'orderId' is missing",
  },
})
