// `npm run contracts:capture`: runs a fleet of its own, captures a few real payloads of every event
// (capture.ts) and writes them to packages/contracts/compat/released/payloads/<type>.json, one JSON
// array per type, replacing what was there. Part of cutting a release of the compatibility gate's
// corpus (packages/contracts README, "Compatibility gate").
import fs from 'node:fs'
import path from 'node:path'
import { repoRoot } from '../service-process.js'
import { captureCorpus } from './capture.js'

const dir = path.join(repoRoot, 'packages', 'contracts', 'compat', 'released', 'payloads')
const corpus = await captureCorpus((line) => console.log(`[capture] ${line}`))
fs.mkdirSync(dir, { recursive: true })
for (const name of fs.readdirSync(dir)) if (name.endsWith('.json')) fs.rmSync(path.join(dir, name))
for (const [type, payloads] of corpus) {
  fs.writeFileSync(path.join(dir, `${type}.json`), `${JSON.stringify(payloads, null, 2)}\n`)
}
console.log(`[capture] wrote ${corpus.size} event types to ${path.relative(repoRoot, dir)}`)
