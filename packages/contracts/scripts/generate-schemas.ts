/**
 * Writes the JSON Schema of every event to docs/events/<type>.json at the repository root and
 * removes files of events that no longer exist. Run: `npm run generate:schemas -w @saga/contracts`.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { allEvents, eventJsonSchemaFiles } from '../src/index.js'

const dir = fileURLToPath(new URL('../../../docs/events/', import.meta.url))
const files = eventJsonSchemaFiles(allEvents)

await mkdir(dir, { recursive: true })
for (const name of await readdir(dir)) {
  if (name.endsWith('.json') && !files.has(name)) await rm(new URL(name, `file://${dir}`))
}
for (const [name, content] of files) await writeFile(`${dir}${name}`, content)
console.log(`wrote ${files.size} schemas to ${dir}`)
