import { randomUUID } from 'node:crypto'
import { pgDatabase } from '@saga/messaging'
import type { BulkJob } from '@saga/messaging-admin'
import { useRouteApp, useServiceTestDatabase } from '@saga/service-kit/testing'
import { eventually } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { database } from '../src/plugins/db.js'
import { adminBulkCancelRoutes } from '../src/routes/admin-bulk-cancel.js'
import { pendingOrder } from './support/app.js'

const TOKEN = 'order-admin-bulk-test-token-0123'
const db = useServiceTestDatabase(database, 'order_admin_bulk_cancel')
const app = useRouteApp('order', (a) =>
  a.register(adminBulkCancelRoutes, {
    database: pgDatabase(db.pool),
    clock: () => new Date(),
    adminToken: TOKEN,
  }),
)

const post = (url: string, body: object, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${TOKEN}`, 'x-admin-actor': 'ops@example', ...headers },
    payload: body,
  })

/** `count` PENDING orders placed after a fresh instant, oldest first; the instant is their filter. */
async function placed(count: number): Promise<{ placedAfter: string; ids: string[] }> {
  const { rows } = await db.pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')
  const ids: string[] = []
  for (let n = 0; n < count; n++) ids.push(await pendingOrder(db))
  return { placedAfter: rows[0]!.now.toISOString(), ids }
}

async function ended(id: string): Promise<BulkJob> {
  let job: BulkJob | undefined
  await eventually('the bulk cancel ended', async () => {
    job = (await app.inject(`/admin/orders/bulk-cancel/${id}`)).json<{ job: BulkJob }>().job
    return ['done', 'stopped', 'failed'].includes(job.state)
  })
  return job!
}

const statuses = async (ids: string[]) =>
  (
    await db.pool.query<{ id: string; status: string; cancellation_reason: string | null }>(
      'SELECT id::text, status, cancellation_reason FROM orders WHERE id = ANY($1::uuid[])',
      [ids],
    )
  ).rows

describe('POST /admin/orders/bulk-cancel', () => {
  it('when PENDING orders are cancelled by filter, then the dry run counts them, the job cancels the oldest up to its limit, and it is one recorded action', async () => {
    const { placedAfter, ids } = await placed(5)
    const dry = await post('/admin/orders/bulk-cancel', { filter: { placedAfter }, dryRun: true })
    expect(dry.statusCode, dry.body).toBe(200)
    expect(dry.json()).toEqual({ dryRun: true, matched: 5, sample: ids })
    expect((await statuses(ids)).every((o) => o.status === 'PENDING')).toBe(true)

    const run = await post(
      '/admin/orders/bulk-cancel',
      { filter: { placedAfter, waitingFor: 'payment' }, limit: 3, ratePerSecond: 200 },
      { 'x-admin-role': 'operator' },
    )
    expect(run.statusCode, run.body).toBe(202)
    const job = await ended(run.json<{ job: BulkJob }>().job.id)
    expect(job).toMatchObject({ state: 'done', matched: 5, done: 3, failed: 0 })
    const after = new Map((await statuses(ids)).map((o) => [o.id, o]))
    expect(ids.map((id) => after.get(id)?.status)).toEqual([
      'CANCELLED',
      'CANCELLED',
      'CANCELLED',
      'PENDING',
      'PENDING',
    ])
    expect(after.get(ids[0]!)?.cancellation_reason).toBe('operator_requested')
    const { rows } = await db.pool.query(
      `SELECT actor, action, target, ids, detail FROM messaging_admin_action WHERE detail->>'jobId' = $1`,
      [job.id],
    )
    expect(rows).toEqual([
      {
        actor: 'ops@example',
        action: 'order.cancel',
        target: 'order',
        ids: ids.slice(0, 3),
        detail: {
          bulk: true,
          jobId: job.id,
          reason: 'operator_requested',
          filter: { placedAfter, waitingFor: 'payment' },
          matched: 5,
          cancelled: 3,
          failed: 0,
          limit: 3,
          ratePerSecond: 200,
          state: 'done',
          role: 'operator',
        },
      },
    ])
  })

  it('when a bulk cancel is stopped, then it ends after the order in flight and records what it did', async () => {
    const { placedAfter, ids } = await placed(4)
    const run = await post('/admin/orders/bulk-cancel', { filter: { placedAfter }, ratePerSecond: 1 })
    const { id } = run.json<{ job: BulkJob }>().job
    await eventually('one order cancelled', async () =>
      (await statuses(ids)).some((o) => o.status === 'CANCELLED'),
    )
    expect((await post(`/admin/orders/bulk-cancel/${id}/stop`, {})).statusCode).toBe(200)
    const job = await ended(id)
    expect(job.state).toBe('stopped')
    expect(job.done).toBeGreaterThanOrEqual(1)
    expect(job.done).toBeLessThan(4)
    expect((await statuses(ids)).filter((o) => o.status === 'CANCELLED')).toHaveLength(job.done)
    expect(job.actionId).toMatch(/^\d+$/)
  })
})

describe('POST /admin/orders/bulk-cancel, refused', () => {
  it('when the request is invalid or not allowed, then 4xx in the error shape and nothing changes', async () => {
    const { placedAfter, ids } = await placed(1)
    const refused = async (body: object, status: number, headers: Record<string, string> = {}) => {
      const res = await post('/admin/orders/bulk-cancel', body, headers)
      expect(res.statusCode, res.body).toBe(status)
      const error = res.json<{ error: string; message: string; details: Array<{ path: string }> }>()
      expect([typeof error.error, typeof error.message]).toEqual(['string', 'string'])
      return error.details.map((d) => d.path)
    }
    expect(await refused({ filter: { placedAfter, colour: 'red' } }, 400)).toContain('body.filter.colour')
    expect(await refused({ filter: { waitingFor: 'moon' } }, 400)).toContain('body.filter.waitingFor')
    expect(await refused({ filter: {}, limit: 0 }, 400)).toContain('body.limit')
    expect(await refused({ filter: {} }, 401, { authorization: 'Bearer wrong-token-0123456789' })).toContain(
      'headers.authorization',
    )
    expect((await app.inject(`/admin/orders/bulk-cancel/${randomUUID()}`)).statusCode).toBe(404)
    expect((await statuses(ids))[0]?.status).toBe('PENDING')
  })
})
