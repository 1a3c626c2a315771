import { OrderCancelled } from '@saga/contracts'
import { outboxOf } from '@saga/messaging/testing'
import { beforeAll, describe, expect, it } from 'vitest'
import { pendingOrder, useOrderRouteApp } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'

// Over real HTTP (curl's way, not inject): a client that sends `content-type: application/json` on
// every request, body or not, must be able to cancel.
const db = useServiceTestDatabase(database, 'order_cancel_body')
const app = useOrderRouteApp(db)
let base: string

beforeAll(async () => {
  base = await app.listen({ host: '127.0.0.1', port: 0 })
})

const json = { 'content-type': 'application/json' }

describe('POST /orders/:id/cancel with a JSON content type', () => {
  it('when the body is empty, then the order is cancelled: 200 CANCELLED and one OrderCancelled', async () => {
    const id = await pendingOrder(db)
    const res = await fetch(`${base}/orders/${id}/cancel`, { method: 'POST', headers: json, body: '' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      id,
      status: 'CANCELLED',
      cancellationReason: 'customer_requested',
    })
    const rows = await outboxOf(db.pool, id)
    expect(rows.filter((row) => row.type === OrderCancelled.type)).toHaveLength(1)
  })

  it('when the body is only whitespace, then it is no body either: 200', async () => {
    const id = await pendingOrder(db)
    const res = await fetch(`${base}/orders/${id}/cancel`, { method: 'POST', headers: json, body: ' \r\n' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ id, status: 'CANCELLED' })
  })

  it('when the body is not empty but malformed, then it is still a 400 naming the body', async () => {
    const id = await pendingOrder(db)
    const res = await fetch(`${base}/orders/${id}/cancel`, { method: 'POST', headers: json, body: '{' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: 'Bad Request', details: [{ path: 'body' }] })
    const rows = await outboxOf(db.pool, id)
    expect(rows.filter((row) => row.type === OrderCancelled.type)).toHaveLength(0)
  })
})

const EMPTY = {
  status: 400,
  body: {
    error: 'Bad Request',
    message: 'The body is empty; send a JSON document',
    details: [{ path: 'body', issue: 'is empty' }],
  },
}

describe('POST /orders (a route that needs a body) with a JSON content type', () => {
  it.each([
    {
      title: 'when the body is empty, then it keeps its 400 saying the body is empty, and nothing is stored',
      init: { method: 'POST', headers: json, body: '' },
      ...EMPTY,
    },
    {
      title:
        'when no body and no content type are sent, then the same 400 as an empty JSON body, and nothing is stored',
      init: { method: 'POST' },
      ...EMPTY,
    },
    {
      title: 'when the body is sent as text/plain, then 415 naming application/json, and nothing is stored',
      init: { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' },
      status: 415,
      body: {
        error: 'Unsupported Media Type',
        message: "The body's media type 'text/plain' is not supported; send application/json",
        details: [{ path: 'headers.content-type', issue: 'must be application/json' }],
      },
    },
  ])('$title', async ({ init, status, body }) => {
    const before = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM orders')
    const res = await fetch(`${base}/orders`, init)
    expect(res.status).toBe(status)
    expect(await res.json()).toEqual(body)
    const after = await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM orders')
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n)
  })
})

describe('POST /orders/:id/cancel (a route that takes no body) without a JSON content type', () => {
  it('when neither a body nor a content type is sent, or an empty text/plain body, then the order is cancelled: 200', async () => {
    for (const headers of [{}, { 'content-type': 'text/plain' }] as Record<string, string>[]) {
      const id = await pendingOrder(db)
      const res = await fetch(`${base}/orders/${id}/cancel`, { method: 'POST', headers })
      expect(res.status, JSON.stringify(headers)).toBe(200)
      expect(await res.json()).toMatchObject({ id, status: 'CANCELLED' })
      const rows = await outboxOf(db.pool, id)
      expect(rows.filter((row) => row.type === OrderCancelled.type)).toHaveLength(1)
    }
  })
})
