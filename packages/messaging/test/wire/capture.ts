/**
 * Captures what a build of @saga/messaging publishes for `WIRE_ROWS`, as JSON on stdout:
 * `npx tsx test/wire/capture.ts <module exporting createRelay> > test/wire/golden-v1.json`.
 * The module is a build's entry (`dist/index.js` of an older checkout, `dist/parts/index.js` of this
 * one), so any two builds can be compared on the wire.
 */
import { pathToFileURL } from 'node:url'
import { createTestDatabase } from '@saga/testkit'
import { MESSAGING_SQL } from '../inbox-fixture.js'
import { publishWireRows, type CreateRelay } from './wire-fixture.js'

interface RelayModule {
  createRelay: CreateRelay
}

const [entry] = process.argv.slice(2)
if (!entry) throw new Error('usage: tsx test/wire/capture.ts <path to a build exporting createRelay>')
const { createRelay } = (await import(pathToFileURL(entry).href)) as RelayModule
const db = await createTestDatabase({ prefix: 'wire_capture', sqlFiles: [MESSAGING_SQL] })
try {
  const messages = await publishWireRows(createRelay, db.pool)
  process.stdout.write(`${JSON.stringify(messages, null, 2)}\n`)
} finally {
  await db.drop()
}
