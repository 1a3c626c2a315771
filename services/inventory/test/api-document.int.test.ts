import { fileURLToPath } from 'node:url'
import { clientModule, describeApiDocument, whenReady } from '@saga/testkit'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'

const start = (env: Record<string, string>) =>
  whenReady(buildApp(loadConfig(env), { fastify: { logger: false } }))

describeApiDocument('inventory', start, {
  documentFile: fileURLToPath(new URL('../../../docs/openapi/inventory.json', import.meta.url)),
  usage: clientModule(`
/** Sets a sku's stock, then reads what is free to reserve. */
export async function restock(sku: string, available: number): Promise<number | undefined> {
  await client.PUT('/stock/{sku}', { params: { path: { sku } }, body: { available } })
  const { data } = await client.GET('/stock/{sku}', { params: { path: { sku } } })
  const stock: components['schemas']['Stock'] | undefined = data
  return stock?.available
}
export type Names = [operations['getStock'], operations['setStock']]
`),
  misuse: {
    usage: `
import createClient from 'openapi-fetch'
import type { paths } from './api.js'
await createClient<paths>().PUT('/stock/{sku}', { params: { path: { sku: 'MUG-001' } }, body: { available: '5' } })
`,
    error: "Type 'string' is not assignable to type 'number'",
  },
})
