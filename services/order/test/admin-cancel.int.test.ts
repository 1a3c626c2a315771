import { randomUUID } from 'node:crypto'
import { OrderCancelled } from '@saga/contracts'
import { pgDatabase } from '@saga/messaging'
import { deliver, memoryLogger } from '@saga/messaging/testing'
import { useRouteApp, useServiceTestDatabase } from '@saga/service-kit/testing'
import { describe, expect, it } from 'vitest'
import { database } from '../src/plugins/db.js'
import { confirmOrderWhenShipmentCreated } from '../src/reactions/confirm-order-when-shipment-created.js'
import { adminOrderRoutes } from '../src/routes/admin-cancel.js'
import { pendingOrder } from './support/app.js'
import { emitted, shipmentCreated } from './support/orders.js'

const TOKEN = 'order-admin-test-token-0123'
const db = useServiceTestDatabase(database, 'order_admin_cancel')
const app = useRouteApp('order', (a) =>
  a.register(adminOrderRoutes, { database: pgDatabase(db.pool), clock: () => new Date(), adminToken: TOKEN }),
)
const readOnly = useRouteApp('order', (a) =>
  a.register(adminOrderRoutes, { database: pgDatabase(db.pool), clock: () => new Date() }),
)

const cancel = (id: string, body: object = {}, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: `/admin/orders/${id}/cancel`,
    headers: { authorization: `Bearer ${TOKEN}`, 'x-admin-actor': 'ops@example', ...headers },
    payload: body,
  })
const statusOf = async (id: string) =>
  (
    await db.pool.query<{ status: string; cancellation_reason: string | null }>(
      'SELECT status, cancellation_reason FROM orders WHERE id = $1',
      [id],
    )
  ).rows[0]
const recorded = async () =>
  (
    await db.pool.query<Record<string, unknown>>(
      'SELECT actor, action, target, ids, detail FROM messaging_admin_action ORDER BY id',
    )
  ).rows

describe('POST /admin/orders/:id/cancel', () => {
  it('when an operator cancels a PENDING order, then it is CANCELLED as operator_requested, announced once with that reason, and the action recorded with it', async () => {
    const id = await pendingOrder(db)
    const before = (await recorded()).length
    const response = await cancel(id)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ dryRun: false, outcome: 'cancelled' })
    expect(response.json<{ actionId: string }>().actionId).toMatch(/^\d+$/)
    expect(await statusOf(id)).toEqual({ status: 'CANCELLED', cancellation_reason: 'operator_requested' })
    const announced = await emitted(db, id, OrderCancelled)
    expect(announced).toHaveLength(1)
    expect(announced[0]!.payload).toMatchObject({ reason: 'operator_requested' })
    expect(announced[0]!.payload).not.toHaveProperty('failedStep')
    expect((await recorded()).slice(before)).toEqual([
      {
        actor: 'ops@example',
        action: 'order.cancel',
        target: 'order',
        ids: [id],
        detail: { reason: 'operator_requested' },
      },
    ])

    const again = await cancel(id)
    expect(again.statusCode).toBe(409)
    expect(again.json<{ message: string }>().message).toBe(`Order ${id} is CANCELLED, not PENDING`)
    expect(await emitted(db, id, OrderCancelled)).toHaveLength(1)
    expect((await recorded()).length).toBe(before + 1)
  })

  it('when it is a dry run, then a PENDING order answers would-cancel and nothing changes or is recorded', async () => {
    const id = await pendingOrder(db)
    const before = (await recorded()).length
    const response = await cancel(id, { dryRun: true })
    expect(response.json()).toEqual({ dryRun: true, actionId: null, outcome: 'would-cancel' })
    expect((await statusOf(id))?.status).toBe('PENDING')
    expect(await emitted(db, id, OrderCancelled)).toHaveLength(0)
    expect((await recorded()).length).toBe(before)
  })

  it('when the order is CONFIRMED or unknown, then 409 or 404 and nothing is recorded', async () => {
    const id = await pendingOrder(db)
    await deliver(
      db.pool,
      confirmOrderWhenShipmentCreated({ logger: memoryLogger(), clock: () => new Date() }),
      shipmentCreated(id),
    )
    const before = (await recorded()).length
    expect((await cancel(id, { dryRun: true })).statusCode).toBe(409)
    expect((await cancel(id)).statusCode).toBe(409)
    expect((await cancel(randomUUID())).statusCode).toBe(404)
    expect((await recorded()).length).toBe(before)
  })

  it('when the bearer is missing or wrong, the body is not JSON, or the service has no token, then it is refused and the order stays PENDING', async () => {
    const id = await pendingOrder(db)
    const missing = await app.inject({ method: 'POST', url: `/admin/orders/${id}/cancel`, payload: {} })
    expect(missing.statusCode).toBe(401)
    expect(missing.headers['www-authenticate']).toBe('Bearer')
    expect((await cancel(id, {}, { authorization: 'Bearer not-the-token-at-all' })).statusCode).toBe(401)
    const form = await app.inject({
      method: 'POST',
      url: `/admin/orders/${id}/cancel`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'dryRun=false',
    })
    expect(form.statusCode).toBe(415)
    const disabled = await readOnly.inject({
      method: 'POST',
      url: `/admin/orders/${id}/cancel`,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: {},
    })
    expect(disabled.statusCode).toBe(403)
    expect((await statusOf(id))?.status).toBe('PENDING')
  })
})
