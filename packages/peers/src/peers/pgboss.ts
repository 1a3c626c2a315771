/**
 * The saga as a choreography over pg-boss queues, one job per step (https://pgboss.io): each
 * worker runs with `transactional: true`, so a step's effect, the next step's job and the job's
 * completion commit in one PostgreSQL transaction (effectively once per step, the outbox pattern
 * pg-boss builds in). New orders are recorded with their first job in one transaction too.
 * LISTEN/NOTIFY wakes the workers (`useListenNotify`, queues with `notify: true`); polling stays the
 * backstop. Everything else is pg-boss's defaults (retries, expiry, retention).
 */
import pg from 'pg'
import { PgBoss, type Db, type Job } from 'pg-boss'
import type { Peer } from '../api.js'
import type { Order } from '../rules.js'
import { charge, clientSql, finish, insertOrder, refund, release, reserve, ship, type Sql } from '../store.js'

/** A step's job: the order, and for compensations and the end the reason it is cancelled. */
interface StepJob {
  order: Order
  reason?: string
}

type Send = (queue: string, data: StepJob) => Promise<unknown>

/** What each queue's worker does in its transaction: its effect, then the next step's job. */
const STEPS: Record<string, (sql: Sql, job: StepJob, send: Send) => Promise<void>> = {
  async charge(sql, { order }, send) {
    const paid = await charge(sql, order)
    await (paid.captured ? send('reserve', { order }) : send('finish', { order, reason: paid.reason! }))
  },
  async reserve(sql, { order }, send) {
    const held = await reserve(sql, order.id, order.items)
    await (held.reserved ? send('ship', { order }) : send('refund', { order, reason: held.reason! }))
  },
  async ship(sql, { order }, send) {
    const booked = await ship(sql, order)
    await (booked.shipped ? send('finish', { order }) : send('release', { order, reason: booked.reason! }))
  },
  async release(sql, { order, reason }, send) {
    await release(sql, order.id)
    await send('refund', { order, reason: reason! })
  },
  async refund(sql, { order, reason }, send) {
    await refund(sql, order.id)
    await send('finish', { order, reason: reason! })
  },
  async finish(sql, { order, reason }) {
    await finish(sql, order.id, reason)
  },
}

/** Starts pg-boss on `databaseUrl` (its schema `pgboss` beside the business tables) and one worker per step. */
export async function startPgBoss(databaseUrl: string, pool: pg.Pool): Promise<Peer> {
  // Each transactional handler in flight holds a connection: 6 queues × localConcurrency 2 = 12, and
  // pg-boss warns unless its pool has room beyond them for fetches, the listener and maintenance.
  const boss = new PgBoss({ connectionString: databaseUrl, useListenNotify: true, max: 20 })
  boss.on('error', (error) => console.error('[pg-boss]', error))
  boss.on('warning', (warning) => console.error('[pg-boss] warning:', warning.message))
  await boss.start()
  for (const [queue, step] of Object.entries(STEPS)) {
    await boss.createQueue(queue, { notify: true })
    await boss.work(
      queue,
      { transactional: true, batchSize: 20, burstWhenBatchFull: true, localConcurrency: 2 } as const,
      async (jobs: Job<StepJob>[], tx: Db) => {
        const sql = clientSql({
          query: (text: string, values?: unknown[]) => tx.executeSql(text, values),
        } as Pick<pg.Pool, 'query'>)
        const send: Send = (next, data) => boss.send(next, data as object, { db: tx })
        for (const job of jobs) await step(sql, job.data, send)
      },
    )
  }
  return {
    async accept(order) {
      const client = await pool.connect()
      try {
        await client.query('BEGIN')
        const sql = clientSql(client)
        await insertOrder(sql, order)
        await boss.send(
          'charge',
          { order },
          { db: { executeSql: (text, values) => client.query(text, values) } },
        )
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined)
        throw error
      } finally {
        client.release()
      }
    },
    stop: () => boss.stop({ graceful: true }),
  }
}
