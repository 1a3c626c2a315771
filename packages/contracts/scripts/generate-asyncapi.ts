/**
 * Writes docs/asyncapi.json, the AsyncAPI 3 document derived from the contracts and the saga map.
 * Run: `npm run generate:asyncapi -w @saga/contracts`.
 */
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { allEvents, asyncApiDocument } from '../src/index.js'

const file = fileURLToPath(new URL('../../../docs/asyncapi.json', import.meta.url))
await writeFile(file, `${JSON.stringify(asyncApiDocument(allEvents), null, 2)}\n`)
console.log(`wrote ${file}`)
