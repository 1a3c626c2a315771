import { ClientErrorResponse } from '@saga/service-kit'
import { beforeAll, describe, expect, it } from 'vitest'
import { pendingOrder, useOrderRouteApp } from './support/app.js'
import { useServiceTestDatabase } from '@saga/service-kit/testing'
import { database } from '../src/plugins/db.js'

// Over real HTTP: a method the path does not serve is 405 with Allow, in the one error shape; a path
// no route serves stays 404.
const db = useServiceTestDatabase(database, 'order_wrong_method')
const app = useOrderRouteApp(db)
let base: string

beforeAll(async () => {
  base = await app.listen({ host: '127.0.0.1', port: 0 })
})

describe('a method the route does not serve', () => {
  it.each([
    ['DELETE', '/orders/:id', 'GET, HEAD'],
    ['PUT', '/orders/:id', 'GET, HEAD'],
    ['GET', '/orders/:id/cancel', 'POST'],
    ['DELETE', '/orders', 'GET, HEAD, POST'],
  ])('when %s %s, then 405 with Allow: %s and the 4xx body', async (method, route, allow) => {
    const id = await pendingOrder(db)
    const path = route.replace(':id', id)
    const res = await fetch(`${base}${path}`, { method })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe(allow)
    const body = ClientErrorResponse.parse(await res.json())
    expect(body).toEqual({
      error: 'Method Not Allowed',
      message: `Method ${method} is not allowed on ${path}`,
      details: [{ path: 'method', issue: `allows ${allow}` }],
    })
    // Nothing happened to the order: still PENDING.
    const order = await fetch(`${base}/orders/${id}`)
    expect(((await order.json()) as { status: string }).status).toBe('PENDING')
  })

  it('when the path is unknown, then 404 without Allow', async () => {
    const res = await fetch(`${base}/orders/x/y/z`, { method: 'DELETE' })
    expect(res.status).toBe(404)
    expect(res.headers.get('allow')).toBeNull()
    expect(ClientErrorResponse.parse(await res.json())).toMatchObject({ error: 'Not Found' })
  })
})
