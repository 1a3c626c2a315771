/**
 * Captures what a build of @saga/messaging publishes for `WIRE_ROWS`, as JSON on stdout:
 * `npx tsx test/wire/capture.ts <module exporting createRelay> > test/wire/golden-v1.json`.
 * The module is a build's entry (`dist/index.js` of an older checkout, `dist/parts/index.js` of this
 * one), so any two builds can be compared on the wire.
 */
import { pathToFileURL } from 'node:url'
import { createTestDatabase, uniqueName } from '@saga/testkit'
import { MESSAGING_SQL } from '../inbox-fixture.js'
import { insertWireRows, rawTap, WIRE_ROWS } from './wire-fixture.js'

interface RelayModule {
  createRelay: (options: Record<string, unknown>) => { start(): Promise<void>; stop(): Promise<void> }
}

const [entry] = process.argv.slice(2)
if (!entry) throw new Error('usage: tsx test/wire/capture.ts <path to a build exporting createRelay>')
const { createRelay } = (await import(pathToFileURL(entry).href)) as RelayModule
const db = await createTestDatabase({ prefix: 'wire_capture', sqlFiles: [MESSAGING_SQL] })
const exchange = uniqueName('wire_capture')
const tap = await rawTap(exchange)
try {
  await insertWireRows(db.pool)
  const relay = createRelay({
    pool: db.pool,
    amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    exchange,
    service: 'wire',
    retentionIntervalMs: 0,
  })
  await relay.start()
  const messages = await tap.take(WIRE_ROWS.length)
  await relay.stop()
  process.stdout.write(`${JSON.stringify(messages, null, 2)}\n`)
} finally {
  await tap.close()
  await db.drop()
}
