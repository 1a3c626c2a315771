/**
 * Micro-benchmark of the per-message SQL text a `pgDatabase` transaction builds: the held outbox
 * INSERT sent with the COMMIT (100 rows per round) and the BEGIN with the inbox INSERT, with
 * sql.ts's `literal` against the same text built with pg's `escapeLiteral`. No database: it measures
 * only the text. Prints the median of 15 rounds, µs per row.
 * Run: `npx tsx bench/inline-sql.ts` in packages/messaging.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { beginWithInboxInsert, heldOutboxInsert, type OutboxInsertValues } from '../src/sql.js'
import { fmt, percentile } from './measure.js'

const ROWS = 100
const ROUNDS = 15
const REPEAT = 200

const rows: OutboxInsertValues[] = Array.from({ length: ROWS }, (_, i) => ({
  id: randomUUID(),
  type: 'order.created.v1',
  routing_key: 'order.created',
  // Every tenth payload has a quote and a backslash (a name like O'Brien, an escaped quote in JSON).
  payload_json: JSON.stringify({
    orderId: randomUUID(),
    customer: i % 10 === 0 ? `O'Brien "the \\ second"` : 'Ada Lovelace',
    lines: [
      { sku: 'SKU-1', quantity: 2, unitPrice: 1_250 },
      { sku: 'SKU-2', quantity: 1, unitPrice: 9_990 },
    ],
    total: 12_490,
  }),
  headers_json: JSON.stringify({
    correlationId: randomUUID(),
    traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
  }),
  aggregate_id: randomUUID(),
}))

/** The held INSERT as built with pg's escapeLiteral, for comparison. */
const INSERT_INTO = 'INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id'
function heldWithPg(row: OutboxInsertValues, holdMs: number): string {
  const literal = pg.escapeLiteral
  const values = [
    `${literal(row.id)}::uuid`,
    literal(row.type),
    literal(row.routing_key),
    literal(row.payload_json),
    literal(row.headers_json),
    row.aggregate_id === null ? 'NULL' : literal(row.aggregate_id),
  ]
  return `${INSERT_INTO}, available_at) VALUES (${values.join(', ')}, clock_timestamp() + ${Math.ceil(holdMs)} * interval '1 millisecond') RETURNING occurred_at`
}

const inboxWithPg = (messageId: string, handler: string): string =>
  `BEGIN;\nINSERT INTO inbox_message (message_id, handler) VALUES (${pg.escapeLiteral(messageId)}::uuid, ${pg.escapeLiteral(handler)}) ON CONFLICT DO NOTHING`

/** µs per row of `build` over every row, median of `ROUNDS` rounds of `REPEAT` passes. */
function perRow(build: (row: OutboxInsertValues) => string): number {
  const rounds: number[] = []
  let sink = 0
  for (let round = 0; round < ROUNDS + 2; round += 1) {
    const start = performance.now()
    for (let pass = 0; pass < REPEAT; pass += 1) for (const row of rows) sink += build(row).length
    // The first two rounds warm the JIT.
    if (round >= 2) rounds.push(((performance.now() - start) * 1_000) / (REPEAT * ROWS))
  }
  if (sink === 0) throw new Error('nothing built')
  return percentile(
    rounds.sort((a, b) => a - b),
    50,
  )
}

const results: [string, number][] = [
  ['held outbox INSERT, pg.escapeLiteral', perRow((row) => heldWithPg(row, 15_000))],
  ['held outbox INSERT, sql.ts literal', perRow((row) => heldOutboxInsert(row, 15_000))],
  ['BEGIN + inbox INSERT, pg.escapeLiteral', perRow((row) => inboxWithPg(row.id, 'reserve-stock'))],
  [
    'BEGIN + inbox INSERT, sql.ts literal',
    perRow((row) => beginWithInboxInsert({ messageId: row.id, handler: 'reserve-stock' })),
  ],
]
console.log(`SQL text per message (${ROWS} rows, median of ${ROUNDS} rounds, node ${process.version})`)
for (const [name, us] of results) console.log(`  ${name.padEnd(45)} ${fmt(us, 3)} µs/row`)
