import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { enqueue, pgDatabase } from '@saga/messaging'
import { deadLetterQueueName } from '@saga/messaging/parts'
import { createMessagingAdmin, type BulkJob, type MessagingAdmin } from '../src/index.js'
import {
  collect,
  createAdminFixture,
  envelope,
  eventually,
  hostApp,
  recordingHandler,
  type AdminFixture,
} from './admin-fixture.js'

const TOKEN = 'admin-token-for-bulk-tests-0123456'
/** Fails while `flakyFails`, with "Downstream is down". */
const FLAKY = 'flaky'
/** Always fails, with "ledger refused". */
const STUCK = 'stuck'

let fx: AdminFixture
let admin: MessagingAdmin
let app: FastifyInstance
let flakyFails = true

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `/admin/messaging${url}`,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'x-admin-actor': 'bulk@ops',
      ...headers,
    },
    payload: JSON.stringify(body),
  })

/** The job `id` once it has ended (done, stopped or failed). */
async function ended(id: string): Promise<BulkJob> {
  let job: BulkJob | undefined
  await eventually('the bulk job ended', async () => {
    const res = await app.inject({ method: 'GET', url: `/admin/messaging/bulk/${id}` })
    job = res.json<{ job: BulkJob }>().job
    return ['done', 'stopped', 'failed'].includes(job.state)
  })
  return job!
}

const actionCount = async (): Promise<number> =>
  Number(
    (await fx.db.pool.query<{ count: string }>('SELECT count(*) FROM messaging_admin_action')).rows[0]!.count,
  )

beforeAll(async () => {
  fx = await createAdminFixture(
    'bulk',
    [
      recordingHandler(FLAKY, () => {
        if (flakyFails) throw new Error('Downstream is down')
      }),
      recordingHandler(STUCK, () => {
        throw new Error('ledger refused')
      }),
    ],
    { maxAttempts: 1 },
  )
  admin = createMessagingAdmin(fx.options)
  app = await hostApp(admin, TOKEN)
  // 20 messages, each dead-lettered by both handlers: 20 letters in each dead-letter queue.
  const dead = collect(fx.messaging.signals, 'deadLettered')
  for (let n = 0; n < 20; n++) await fx.publish(envelope({ data: { n } }))
  await eventually('40 dead letters', () => dead.length === 40)
})

afterAll(async () => {
  await app?.close()
  await admin?.close()
  await fx?.cleanup()
})

describe('bulk dry runs', () => {
  it('when a filter is dry run, then it counts the matching letters of the handler, reason and time, and changes nothing', async () => {
    const preview = async (filter: Record<string, unknown>) => {
      const res = await post('/bulk', { kind: 'requeue', filter, dryRun: true })
      expect(res.statusCode, res.body).toBe(200)
      return res.json<{ matched: number; scanned: number; complete: boolean; sample: unknown[] }>()
    }
    const all = await preview({})
    expect(all).toMatchObject({ matched: 40, scanned: 40, complete: true })
    expect(all.sample).toHaveLength(10)
    expect((await preview({ handler: FLAKY })).matched).toBe(20)
    expect((await preview({ reason: 'DOWNSTREAM' })).matched).toBe(20)
    expect((await preview({ handler: STUCK, reason: 'downstream' })).matched).toBe(0)
    expect(
      (await preview({ type: 'test.happened.v1', until: new Date(Date.now() + 60_000).toISOString() }))
        .matched,
    ).toBe(40)
    expect((await preview({ since: new Date(Date.now() + 60_000).toISOString() })).matched).toBe(0)
    expect(await fx.ready(deadLetterQueueName(fx.queue(FLAKY)))).toBe(20)
    expect(await actionCount()).toBe(0)
  })
})

describe('bulk requeue', () => {
  it('when the letters of a handler are requeued in bulk, then each is handled once, up to the limit, and each job is one recorded action', async () => {
    flakyFails = false
    const before = await actionCount()
    const start = await post('/bulk', {
      kind: 'requeue',
      filter: { handler: FLAKY, reason: 'downstream' },
      limit: 15,
      ratePerSecond: 1_000,
    })
    expect(start.statusCode, start.body).toBe(202)
    const first = await ended(start.json<{ job: BulkJob }>().job.id)
    expect(first).toMatchObject({ state: 'done', matched: 20, done: 15, failed: 0, error: null })
    await eventually('15 handled', async () => (await fx.effects(FLAKY)).length === 15)

    const rest = await post('/bulk', { kind: 'requeue', filter: { handler: FLAKY }, ratePerSecond: 1_000 })
    const second = await ended(rest.json<{ job: BulkJob }>().job.id)
    expect(second).toMatchObject({ state: 'done', matched: 5, done: 5 })
    await eventually('all 20 handled', async () => (await fx.effects(FLAKY)).length === 20)
    const handled = await fx.effects(FLAKY)
    expect(new Set(handled.map((e) => e.message_id)).size).toBe(20)
    expect(await fx.ready(deadLetterQueueName(fx.queue(FLAKY)))).toBe(0)
    // The other handler's letters were not taken.
    expect(await fx.ready(deadLetterQueueName(fx.queue(STUCK)))).toBe(20)

    expect(await actionCount()).toBe(before + 2)
    const { rows } = await fx.db.pool.query(
      'SELECT id::text, actor, action, target, cardinality(ids) AS ids, detail FROM messaging_admin_action WHERE id = $1',
      [first.actionId],
    )
    expect(rows[0]).toEqual({
      id: first.actionId,
      actor: 'bulk@ops',
      action: 'dead-letters.requeue',
      target: deadLetterQueueName(fx.queue(FLAKY)),
      ids: 15,
      detail: {
        bulk: true,
        jobId: first.id,
        filter: { handler: FLAKY, reason: 'downstream' },
        matched: 20,
        requeued: 15,
        failed: 0,
        limit: 15,
        ratePerSecond: 1_000,
        state: 'done',
      },
    })
  })

  it('when a job is stopped, then it ends after its batch in flight, never takes a letter twice, and records what it did', async () => {
    const dead = collect(fx.messaging.signals, 'deadLettered')
    // One letter a second: the first batch is one letter, then the job waits for its pace.
    const start = await post(
      '/bulk',
      { kind: 'requeue', filter: { handler: STUCK }, ratePerSecond: 1 },
      { 'x-admin-role': 'operator' },
    )
    const { id } = start.json<{ job: BulkJob }>().job
    await eventually('the first letter requeued', () => admin.bulkJob(id)!.done >= 1)
    const stop = await post(`/bulk/${id}/stop`, {})
    expect(stop.statusCode, stop.body).toBe(200)
    const job = await ended(id)
    expect(job.state).toBe('stopped')
    expect(job.done).toBeGreaterThanOrEqual(1)
    expect(job.done).toBeLessThan(20)
    // The requeued letter failed again and came back: the queue holds all 20 again.
    await eventually('the requeued letter dead-lettered again', () => dead.length === job.done)
    await eventually(
      '20 letters again',
      async () => (await fx.ready(deadLetterQueueName(fx.queue(STUCK)))) === 20,
    )
    const { rows } = await fx.db.pool.query<{ detail: unknown }>(
      'SELECT detail FROM messaging_admin_action WHERE id = $1',
      [job.actionId],
    )
    expect(rows[0]!.detail).toMatchObject({ state: 'stopped', requeued: job.done, role: 'operator' })
  })
})

describe('bulk retry of parked rows', () => {
  it('when parked rows are retried by type and reason, then a dry run counts them and the job makes them pending', async () => {
    const database = pgDatabase(fx.db.pool)
    const park = async (type: string, error: string) => {
      const id = await database.transaction((tx) =>
        enqueue(tx, { type, routingKey: 'p', payload: {}, aggregateId: randomUUID(), correlationId: 'c' }),
      )
      await fx.db.pool.query(
        `UPDATE outbox_message SET failed_at = now(), attempts = 9, last_error = $2 WHERE id = $1`,
        [id, error],
      )
      return id
    }
    const wanted = [await park('p.v1', 'NO_ROUTE'), await park('p.v1', 'no_route again')]
    const other = [await park('p.v1', 'timeout'), await park('q.v1', 'no_route')]
    const filter = { type: 'p.v1', reason: 'no_route' }
    const dry = await post('/bulk', { kind: 'retry', filter, dryRun: true })
    expect(dry.json()).toMatchObject({ matched: 2, complete: true })
    const start = await post('/bulk', { kind: 'retry', filter, ratePerSecond: 1_000 })
    const job = await ended(start.json<{ job: BulkJob }>().job.id)
    expect(job).toMatchObject({ state: 'done', done: 2, matched: 2 })
    const { rows } = await fx.db.pool.query<{ id: string; parked: boolean }>(
      'SELECT id, failed_at IS NOT NULL AS parked FROM outbox_message WHERE id = ANY($1::uuid[])',
      [[...wanted, ...other]],
    )
    expect(Object.fromEntries(rows.map((r) => [r.id, r.parked]))).toEqual({
      [wanted[0]!]: false,
      [wanted[1]!]: false,
      [other[0]!]: true,
      [other[1]!]: true,
    })
    const action = await fx.db.pool.query<{ action: string; ids: string[]; detail: unknown }>(
      'SELECT action, ids, detail FROM messaging_admin_action WHERE id = $1',
      [job.actionId],
    )
    expect(action.rows[0]).toMatchObject({
      action: 'parked.retry',
      detail: { filter, retried: 2, matched: 2 },
    })
    expect([...action.rows[0]!.ids].sort()).toEqual([...wanted].sort())
    await fx.db.pool.query('DELETE FROM outbox_message')
  })
})

describe('bulk requests refused', () => {
  it('when a bulk request is invalid, then 4xx in the error shape naming the field, and nothing starts', async () => {
    const refused = async (body: unknown, status: number, path: string) => {
      const res = await post('/bulk', body)
      expect(res.statusCode, res.body).toBe(status)
      const error = res.json<{ error: string; message: string; details: Array<{ path: string }> }>()
      expect(error.message).toEqual(expect.any(String))
      expect(error.details.map((d) => d.path)).toContain(path)
    }
    await refused({ kind: 'requeue', filter: { colour: 'red' } }, 400, 'body/filter')
    await refused({ kind: 'requeue', filter: { since: 'yesterday' } }, 400, 'body/filter/since')
    await refused({ kind: 'requeue', filter: {}, limit: 0 }, 400, 'body/limit')
    await refused({ kind: 'requeue', filter: {}, ratePerSecond: 5_000 }, 400, 'body/ratePerSecond')
    await refused({ kind: 'move', filter: {} }, 400, 'body/kind')
    await refused({ kind: 'retry', filter: { handler: FLAKY } }, 400, 'body.filter.handler')
    const now = new Date().toISOString()
    await refused({ kind: 'discard', filter: { since: now, until: now } }, 400, 'body.filter.until')
    await refused({ kind: 'discard', filter: { handler: 'nobody' } }, 404, 'body.filter.handler')
    const unknown = await app.inject({ method: 'GET', url: `/admin/messaging/bulk/${randomUUID()}` })
    expect(unknown.statusCode).toBe(404)
    const noToken = await post('/bulk', { kind: 'requeue', filter: {}, dryRun: true }, { authorization: '' })
    expect(noToken.statusCode).toBe(401)
    const badRole = await post(
      '/bulk',
      { kind: 'requeue', filter: {}, dryRun: true },
      { 'x-admin-role': 'Root!' },
    )
    expect(badRole.statusCode).toBe(400)
    expect(await fx.ready(deadLetterQueueName(fx.queue(STUCK)))).toBe(20)
  })
})
