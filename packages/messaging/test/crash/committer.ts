/**
 * A process that commits outbox rows with publish on commit, for the crash tests: the test kills
 * it (SIGKILL) at a chosen point. Reads DATABASE_URL, AMQP_URL and EXCHANGE; prints `ready` once
 * its relay is connected, then for every `commit` line on stdin commits one row and prints its id.
 */
import { createInterface } from 'node:readline'
import pg from 'pg'
import { createMessaging } from '../../src/messaging.js'
import { enqueue } from '../../src/outbox/enqueue.js'

const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is required`)
  return value
}

const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 4 })
pool.on('error', () => undefined)
const messaging = createMessaging({
  service: 'committer',
  pool,
  amqpUrl: env('AMQP_URL'),
  exchange: env('EXCHANGE'),
  // A short publish timeout keeps the hold (publish timeout + 5 s) short; no sweep of its own.
  relay: {
    publishTimeoutMs: 1_000,
    pollIntervalMs: 600_000,
    retentionIntervalMs: 0,
    wakeup: { listen: false },
  },
})
await messaging.start()
while (!messaging.health().areas.every((area) => area.ok))
  await new Promise((resolve) => setTimeout(resolve, 20))
process.stdout.write('ready\n')

let n = 0
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== 'commit') continue
  n += 1
  const id = await messaging.transaction((tx) =>
    enqueue(tx, {
      type: 'crash.committed.v1',
      routingKey: 'crash.committed',
      payload: { n },
      aggregateId: `agg-${n}`,
      correlationId: `corr-${n}`,
    }),
  )
  process.stdout.write(`${id}\n`)
}
