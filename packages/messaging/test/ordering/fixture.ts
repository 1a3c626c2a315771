/**
 * What the per-key order tests share: an ordered producer (`createMessaging` with its relay, in
 * this process) that enqueues `keys` x `perKey` sequenced messages, each in a transaction of its
 * own, one key's in order and the keys interleaved; a child process running an ordered consumer;
 * and the check that every key's messages were handled once each, in commit order.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { AMQP_URL } from '@saga/testkit'
import type pg from 'pg'
import { createMessaging, type Messaging } from '../../src/messaging.js'
import { enqueue } from '../../src/outbox/enqueue.js'
import { createInboxFixture, happened, type InboxFixture } from '../inbox-fixture.js'
import type { OrderedConsumerSettings } from './ordered-consumer.js'

const CHILD = fileURLToPath(new URL('./consumer-process.ts', import.meta.url))
const ORDERING_SQL = fileURLToPath(new URL('../../sql/ordering.sql', import.meta.url))

/** `createInboxFixture(name)` with per-key order's tables (sql/ordering.sql) in its database too. */
export async function createOrderingFixture(name: string): Promise<InboxFixture> {
  const created = await createInboxFixture(name)
  await created.db.pool.query(await readFile(ORDERING_SQL, 'utf8'))
  return created
}

/**
 * Consumer options of the ordered batching tests: batches of up to 10 from the first delivery on
 * (no budget to learn), and a sweep that never runs in a test's time, so what a test sees was done
 * by the deliveries themselves.
 */
export const ORDERED_BATCHING = {
  prefetch: 40,
  batchMax: 10,
  batchBudgetMs: Number.POSITIVE_INFINITY,
  ordering: { sweepMs: 600_000 },
}

/** A producer of sequenced `test.happened.v1` messages: `n` is the message's place in its key (1, 2, ...). */
export function orderedProducer(pool: pg.Pool, exchange: string): Messaging<pg.PoolClient> {
  return createMessaging<pg.PoolClient>({ service: 'producer', pool, amqpUrl: AMQP_URL, exchange })
}

/**
 * Enqueues `perKey` messages for each of `keys` keys (fresh UUIDs, or the ids given), `writers`
 * transactions at a time, `n` from `firstN` (1) on; a key's messages are enqueued one after
 * another, so their commit order is n's order. Returns the keys.
 */
export async function produce(
  messaging: Messaging<pg.PoolClient>,
  keys: number | readonly string[],
  perKey: number,
  writers = 8,
  firstN = 1,
): Promise<string[]> {
  const ids = typeof keys === 'number' ? Array.from({ length: keys }, () => randomUUID()) : [...keys]
  let next = 0
  const writer = async (): Promise<void> => {
    for (let index = next++; index < ids.length; index = next++) {
      const key = ids[index] as string
      for (let n = firstN; n < firstN + perKey; n += 1) {
        await messaging.transaction((tx) =>
          enqueue(tx, {
            type: happened.type,
            routingKey: happened.routingKey,
            payload: { n },
            aggregateId: key,
            correlationId: key,
            orderingKey: key,
          }),
        )
      }
    }
  }
  await Promise.all(Array.from({ length: writers }, writer))
  return ids
}

/**
 * Every key's effects of `handler`, in the order they were written (`effect.id`): its `n`s and the
 * sequence numbers the producer gave, by key.
 */
export async function effectsByKey(
  pool: pg.Pool,
  handler: string,
): Promise<Map<string, Array<{ n: number; sequence: number }>>> {
  const { rows } = await pool.query<{ key: string; n: number; sequence: string }>(
    `SELECT o.aggregate_id AS key, e.n, o.headers->>'sequence' AS sequence
       FROM effect e JOIN outbox_message o ON o.id = e.message_id
      WHERE e.handler = $1 ORDER BY e.id`,
    [handler],
  )
  const byKey = new Map<string, Array<{ n: number; sequence: number }>>()
  for (const row of rows) {
    const list = byKey.get(row.key) ?? []
    list.push({ n: row.n, sequence: Number(row.sequence) })
    byKey.set(row.key, list)
  }
  return byKey
}

/** A child process running an ordered consumer; `kill` SIGKILLs it. */
export interface ConsumerChild {
  kill(): Promise<void>
}

/** Starts `consumer-process.ts` and waits for its `ready` line. @throws when it exits first or after 60 s */
export async function startConsumerChild(
  databaseUrl: string,
  settings: OrderedConsumerSettings,
): Promise<ConsumerChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, DATABASE_URL: databaseUrl, SETTINGS: JSON.stringify(settings) },
  })
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumer child not ready in 60 s: ${stderr}`)), 60_000)
    proc.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        clearTimeout(timer)
        resolve()
      }
    })
    void exited.then(() => reject(new Error(`consumer child exited: ${stderr}`)))
  })
  return {
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
      await exited
    },
  }
}
