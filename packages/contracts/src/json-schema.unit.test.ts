import { readdir, readFile } from 'node:fs/promises'
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

  it('when a schema is generated, then it names the event and requires its fields', () => {
    const [name, content] = [...eventJsonSchemaFiles(allEvents)][0] ?? []
    expect(name).toBe('order.created.v1.json')
    const schema = JSON.parse(content ?? '{}') as { title: string; required: string[]; $id: string }
    expect(schema.title).toBe('OrderCreated')
    expect(schema.$id).toBe('urn:saga:event:order.created.v1')
    expect(schema.required).toContain('totalAmount')
  })
})
