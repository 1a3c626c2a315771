/**
 * `npm run contracts:release -w @saga/contracts`: makes the working tree's event schemas the released
 * ones of the compatibility gate. Writes the JSON Schema of every event (as docs/events has it) to
 * compat/released/schemas/<type>.json and removes released types that no longer exist. The payloads
 * are captured separately (`npm run contracts:capture`, a fleet of its own); this script names the
 * types still without any.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { allEvents, eventJsonSchemaFiles } from '../src/index.js'
import { RELEASED_DIR } from '../src/compat/corpus.js'

const dir = path.join(RELEASED_DIR, 'schemas')
const files = eventJsonSchemaFiles(allEvents)
await mkdir(dir, { recursive: true })
for (const name of await readdir(dir)) {
  if (name.endsWith('.json') && !files.has(name)) await rm(path.join(dir, name))
}
for (const [name, content] of files) await writeFile(path.join(dir, name), content)
console.log(`released ${files.size} schemas to ${dir}`)
const without = [...files.keys()].filter((name) => !existsSync(path.join(RELEASED_DIR, 'payloads', name)))
if (without.length > 0) {
  console.log(`no captured payloads yet for ${without.join(', ')}: run \`npm run contracts:capture\``)
}
