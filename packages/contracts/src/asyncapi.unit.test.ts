import { readFileSync } from 'node:fs'
import { TypeScriptGenerator } from '@asyncapi/modelina'
import { Parser } from '@asyncapi/parser'
import { describe, expect, it } from 'vitest'
import { asyncApiDocument, receiveOperationId } from './asyncapi.js'
import { allEvents } from './index.js'
import { sagaMap } from './saga-map.js'

const document = asyncApiDocument(allEvents)

describe('AsyncAPI document', () => {
  it('when parsed with the AsyncAPI parser, then it is a valid AsyncAPI 3 document without errors', async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document))
    // Spectral's DiagnosticSeverity: 0 is an error.
    expect(
      diagnostics.filter((d) => Number(d.severity) === 0).map((d) => `${d.path.join('.')}: ${d.message}`),
    ).toEqual([])
    expect(parsed?.version()).toBe('3.0.0')
    expect(parsed?.channels().length).toBe(allEvents.length)
  })

  it('when derived from the saga map, then every handler receives and every fact is sent by its producer', () => {
    const operations = Object.entries(document.operations) as [string, { action: string }][]
    const receive = operations.filter(([, op]) => op.action === 'receive').map(([id]) => id)
    expect(receive.sort()).toEqual(sagaMap.map(receiveOperationId).sort())
    const send = operations.filter(([, op]) => op.action === 'send')
    expect(send).toHaveLength(allEvents.length)
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
