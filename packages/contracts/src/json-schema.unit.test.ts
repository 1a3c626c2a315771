import { readdir, readFile } from 'node:fs/promises'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { allEvents, eventJsonSchemaFiles } from './index.js'

const dir = new URL('../../../docs/events/', import.meta.url)

describe('docs/events JSON Schemas', () => {
  it('when the zod schemas change, then the checked-in JSON Schemas must be regenerated', async () => {
    const expected = eventJsonSchemaFiles(allEvents)
    const onDisk = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort()
    const hint = 'stale: run `npm run generate:schemas -w @saga/contracts`'
    expect(onDisk, hint).toEqual([...expected.keys()].sort())
    for (const [name, content] of expected) {
      expect(await readFile(new URL(name, dir), 'utf8'), `${name} is ${hint}`).toBe(content)
    }
  })

  it('when a strict validator (ajv, default options, with the standard formats) compiles each schema, then it takes it and checks payloads by it', async () => {
    const ajv = new Ajv2020()
    addFormats.default(ajv)
    for (const event of allEvents) {
      const file = JSON.parse(await readFile(new URL(`${event.type}.json`, dir), 'utf8')) as object
      expect(() => ajv.compile(file), event.type).not.toThrow()
    }
    const orderCreated = ajv.getSchema('urn:saga:event:order.created.v1')
    expect(orderCreated?.({ orderId: 'not a uuid' })).toBe(false)
    expect(orderCreated?.errors?.length).toBeGreaterThan(0)
  })

  it('when a schema is generated, then it names the event and requires its fields', () => {
    const [name, content] = [...eventJsonSchemaFiles(allEvents)][0] ?? []
    expect(name).toBe('order.created.v1.json')
    const schema = JSON.parse(content ?? '{}') as { title: string; required: string[]; $id: string }
    expect(schema.title).toBe('OrderCreated')
    expect(schema.$id).toBe('urn:saga:event:order.created.v1')
    expect(schema.required).toContain('totalAmount')
  })
})
