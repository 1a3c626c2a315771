import { randomUUID } from 'node:crypto'
import { OrderCancelled } from '@saga/contracts'
import type { ConsumedMessage, HandlerDefinition } from '@saga/messaging'
import { deliver, memoryLogger } from '@saga/messaging/testing'
import { describe, expect, it } from 'vitest'
import type { Tx } from '../src/plugins/db.js'
import { cancelOrderWhenPaymentFailed } from '../src/reactions/cancel-order-when-payment-failed.js'
import { confirmOrderWhenShipmentCreated } from '../src/reactions/confirm-order-when-shipment-created.js'
import { pendingOrder, useOrderRouteApp } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'
import { emitted, orderBody, paymentFailed, shipmentCreated } from './support/orders.js'

const logger = memoryLogger()
const deps = { logger, clock: () => new Date() }
const DEADLINE_MS = 90_000

const db = useServiceTestDatabase(database, 'order_customer_cancel')
const app = useOrderRouteApp(db, { deadlineMs: DEADLINE_MS })

interface View {
  id: string
  status: string
  cancellationReason: string | null
  failedStep: string | null
  deadlineAt: string | null
  createdAt: string
  events: { type: string; note: string | null }[]
}
interface ErrorBody {
  error: string
  message: string
  details: { path: string; issue: string }[]
}

const cancel = (id: string) => app.inject({ method: 'POST', url: `/orders/${id}/cancel` })
const cancelledRows = (orderId: string) => emitted(db, orderId, OrderCancelled)

/** Cancels a new PENDING order by HTTP after `fact(orderId)` was delivered to `reaction`. */
async function cancelAfter<P>(
  reaction: HandlerDefinition<Tx, P>,
  fact: (orderId: string) => ConsumedMessage<P>,
): Promise<{ orderId: string; response: Awaited<ReturnType<typeof cancel>> }> {
  const orderId = await pendingOrder(db)
  await deliver(db.pool, reaction, fact(orderId))
  return { orderId, response: await cancel(orderId) }
}

describe('POST /orders deadline', () => {
  it('when an order is placed, then its deadline is ORDER_DEADLINE_MS after the database clock at creation', async () => {
    const before = await db.pool.query<{ now: Date }>('SELECT now() AS now')
    const response = await app.inject({ method: 'POST', url: '/orders', payload: orderBody() })
    const after = await db.pool.query<{ now: Date }>('SELECT now() AS now')

    expect(response.statusCode).toBe(201)
    const order = response.json<View>()
    const stored = await db.prisma.order.findUniqueOrThrow({ where: { id: order.id } })
    expect(order.deadlineAt).toBe(stored.deadlineAt?.toISOString())
    const deadline = Date.parse(order.deadlineAt ?? '')
    expect(deadline).toBeGreaterThanOrEqual(before.rows[0]!.now.getTime() + DEADLINE_MS)
    expect(deadline).toBeLessThanOrEqual(after.rows[0]!.now.getTime() + DEADLINE_MS)
  })
})

describe('POST /orders/:id/cancel', () => {
  it('when the order is PENDING, then 200 shows it CANCELLED by the customer and one OrderCancelled without a step is emitted', async () => {
    const orderId = await pendingOrder(db)

    const response = await cancel(orderId)

    expect(response.statusCode).toBe(200)
    const view = response.json<View>()
    expect(view).toMatchObject({
      id: orderId,
      status: 'CANCELLED',
      cancellationReason: 'customer_requested',
      failedStep: null,
    })
    expect(view.events.find((e) => e.type === OrderCancelled.type)?.note).toBe('cancelled by the customer')
    const rows = await cancelledRows(orderId)
    expect(rows).toHaveLength(1)
    const payload = OrderCancelled.schema.parse(rows[0]?.payload)
    expect(payload).toMatchObject({ orderId, reason: 'customer_requested' })
    expect(payload).not.toHaveProperty('failedStep')
    expect(rows[0]?.headers).toMatchObject({ correlationId: orderId })
  })

  it('when the order is cancelled twice, then both answers are 200 with the same view and one OrderCancelled exists', async () => {
    const orderId = await pendingOrder(db)

    const first = await cancel(orderId)
    const second = await cancel(orderId)

    expect(first.statusCode).toBe(200)
    expect(second.statusCode).toBe(200)
    expect(second.json()).toEqual(first.json())
    expect(await cancelledRows(orderId)).toHaveLength(1)
  })

  it('when a step already cancelled the order, then 200 keeps the step reason and nothing is emitted again', async () => {
    const { orderId, response } = await cancelAfter(cancelOrderWhenPaymentFailed(deps), paymentFailed)

    expect(response.statusCode).toBe(200)
    expect(response.json<View>()).toMatchObject({
      cancellationReason: 'card_declined',
      failedStep: 'payment',
    })
    expect(await cancelledRows(orderId)).toHaveLength(1)
  })

  it('when the order is CONFIRMED, then 409 names its status and nothing changes or is emitted', async () => {
    const { orderId, response } = await cancelAfter(confirmOrderWhenShipmentCreated(deps), shipmentCreated)

    expect(response.statusCode).toBe(409)
    const body = response.json<ErrorBody>()
    expect(body.error).toBe('Conflict')
    expect(body.message).toContain('CONFIRMED')
    expect(body.details).toEqual([{ path: 'status', issue: 'is CONFIRMED' }])
    expect((await db.prisma.order.findUniqueOrThrow({ where: { id: orderId } })).status).toBe('CONFIRMED')
    expect(await cancelledRows(orderId)).toHaveLength(0)
  })

  it('when the order is unknown, then 404 in the error shape', async () => {
    const response = await cancel(randomUUID())

    expect(response.statusCode).toBe(404)
    expect(response.json<ErrorBody>().error).toBe('Not Found')
  })

  it('when the id is not a uuid, then 400 names the parameter', async () => {
    const response = await cancel('not-a-uuid')

    expect(response.statusCode).toBe(400)
    expect(response.json<ErrorBody>().details.map((d) => d.path)).toEqual(['params.id'])
  })
})
