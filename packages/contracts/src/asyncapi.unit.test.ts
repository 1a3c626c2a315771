import { readFileSync } from 'node:fs'
import { TypeScriptGenerator } from '@asyncapi/modelina'
import { Parser } from '@asyncapi/parser'
import { describe, expect, it } from 'vitest'
import { asyncApiDocument, receiveOperationId, receiveOperations } from './asyncapi.js'
import { allEvents } from './index.js'
import { OrderCreatedV1toV2, OrderCreatedV2 } from './order.js'
import { sagaMap } from './saga-map.js'

const document = asyncApiDocument(allEvents)
const routingKeys = new Set(allEvents.map((e) => e.routingKey))

describe('AsyncAPI document', () => {
  it('when parsed with the AsyncAPI parser, then it is a valid AsyncAPI 3 document without errors', async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document))
    // Spectral's DiagnosticSeverity: 0 is an error.
    expect(
      diagnostics.filter((d) => Number(d.severity) === 0).map((d) => `${d.path.join('.')}: ${d.message}`),
    ).toEqual([])
    expect(parsed?.version()).toBe('3.0.0')
    expect(parsed?.channels().length).toBe(routingKeys.size)
  })

  it('when derived from the saga map, then every handler receives and every fact is sent by its producer', () => {
    const operations = Object.entries(document.operations) as [string, { action: string }][]
    const receive = operations.filter(([, op]) => op.action === 'receive').map(([id]) => id)
    expect(receive.sort()).toEqual(sagaMap.map(receiveOperationId).sort())
    const send = operations.filter(([, op]) => op.action === 'send')
    expect(send).toHaveLength(routingKeys.size)
  })

  it('when an event has two versions, then its channel carries both messages and its producer sends both', () => {
    const channel = document.channels['order.created'] as { messages: Record<string, unknown> }
    expect(Object.keys(channel.messages)).toEqual(['OrderCreated', 'OrderCreatedV2'])
    const messages = document.components.messages as Record<string, { name: string }>
    expect(messages.OrderCreated?.name).toBe('order.created.v1')
    expect(messages.OrderCreatedV2?.name).toBe('order.created.v2')
    const send = document.operations['order.send.order.created'] as { messages: unknown[] }
    expect(send.messages).toEqual([
      { $ref: '#/channels/order.created/messages/OrderCreated' },
      { $ref: '#/channels/order.created/messages/OrderCreatedV2' },
    ])
  })

  it('when a reaction reads v2 and upcasts v1, then its receive operation takes both messages', () => {
    const [moved] = sagaMap
      .filter((r) => r.handler === 'process-payment-when-order-created')
      .map((r) => ({ ...r, reactsTo: OrderCreatedV2, alsoReads: [OrderCreatedV1toV2] }))
    const operation = receiveOperations([moved!])['payment.process-payment-when-order-created'] as {
      summary: string
      messages: unknown[]
    }
    expect(operation.messages).toEqual([
      { $ref: '#/channels/order.created/messages/OrderCreatedV2' },
      { $ref: '#/channels/order.created/messages/OrderCreated' },
    ])
    expect(operation.summary).toContain('also reads order.created.v1 (upcast to order.created.v2)')
  })

  it('when compared with docs/asyncapi.json, then the checked-in file is current (npm run generate:asyncapi)', () => {
    const file = readFileSync(new URL('../../../docs/asyncapi.json', import.meta.url), 'utf8')
    expect(file).toBe(`${JSON.stringify(document, null, 2)}\n`)
  })

  it('when Modelina generates TypeScript models from it, then each envelope and each nested type has a name, and the envelope fields CloudEvents requires are required', async () => {
    const models = await new TypeScriptGenerator({ modelType: 'interface' }).generate(document)
    const names = models.map((model) => model.modelName)
    expect(names.filter((name) => name.startsWith('AnonymousSchema'))).toEqual([])
    const messageIds = Object.keys(document.components.messages)
    expect(messageIds).toHaveLength(allEvents.length)
    for (const id of messageIds) {
      const envelope = models.find((model) => model.modelName === `${id}Envelope`)
      expect(envelope, id).toBeDefined()
      for (const required of [
        'specversion',
        'id',
        'source',
        'time',
        'datacontenttype',
        'correlationid',
        'data',
      ])
        expect(envelope?.result, `${id} ${required}`).toMatch(new RegExp(`\\n  ${required}: `))
      expect(envelope?.result).toMatch(/\n {2}subject\?: string;/)
    }
  })
})
