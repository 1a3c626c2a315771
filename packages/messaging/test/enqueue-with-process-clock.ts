/**
 * Run as a child process of clock-skew.int.test.ts, under `faketime`: enqueues one row the way a
 * service does (occurredAt from its own clock) and prints `{ id, processNow }` as JSON.
 * Usage: `node --import tsx test/enqueue-with-process-clock.ts <database url>`.
 */
import pg from 'pg'
import { pgDatabase } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'

const url = process.argv[2]
if (!url) throw new Error('usage: enqueue-with-process-clock.ts <database url>')
const pool = new pg.Pool({ connectionString: url, max: 1 })
try {
  const now = new Date()
  const id = await pgDatabase(pool).transaction((tx) =>
    enqueue(tx, {
      type: 'clock.happened.v1',
      routingKey: 'clock.happened',
      payload: {},
      correlationId: 'clock',
      occurredAt: now,
    }),
  )
  console.log(JSON.stringify({ id, processNow: now.toISOString() }))
} finally {
  await pool.end()
}
