import { randomUUID } from 'node:crypto'
import { useRouteApp, useServiceTestDatabase } from '@saga/service-kit/testing'
import { describe, expect, it } from 'vitest'
import { stockRoutes } from '../src/routes/stock.js'
import { MAX_AVAILABLE } from '../src/schemas.js'
import { database } from '../src/plugins/db.js'

const db = useServiceTestDatabase(database, 'inventory')
const app = useRouteApp('inventory', (app) => app.register(stockRoutes, { db: db.prisma }))

const newSku = () => `TEST-${randomUUID().slice(0, 8)}`
const stockRows = async () =>
  (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM stock')).rows[0]?.n

describe('PUT /stock/:sku and GET /stock/:sku', () => {
  it('when a sku is set, then GET returns its available units and zero reserved', async () => {
    const sku = newSku()
    const put = await app.inject({ method: 'PUT', url: `/stock/${sku}`, payload: { available: 7 } })
    expect(put.statusCode).toBe(200)
    expect(put.json()).toEqual({ sku, available: 7, reserved: 0 })

    const get = await app.inject({ method: 'GET', url: `/stock/${sku}` })
    expect(get.statusCode).toBe(200)
    expect(get.json()).toEqual({ sku, available: 7, reserved: 0 })
  })

  it('when a sku with reservations is set again, then available is replaced and reserved is kept', async () => {
    const sku = newSku()
    await db.pool.query('INSERT INTO stock (sku, available, reserved) VALUES ($1, 3, 2)', [sku])

    const put = await app.inject({ method: 'PUT', url: `/stock/${sku}`, payload: { available: 10 } })

    expect(put.json()).toEqual({ sku, available: 10, reserved: 2 })
  })

  it('when the sku is unknown, then GET answers 404 in the error shape', async () => {
    const res = await app.inject({ method: 'GET', url: `/stock/${newSku()}` })
    expect(res.statusCode).toBe(404)
    const body = res.json<{ error: string; message: string; details: unknown[] }>()
    expect(body).toMatchObject({ error: 'Not Found', details: [] })
    expect(body.message).toMatch(/not found/)
  })

  const badBodies: [string, unknown, string][] = [
    ['a negative count', { available: -1 }, 'body.available'],
    ['a fraction', { available: 1.5 }, 'body.available'],
    ['a string', { available: '5' }, 'body.available'],
    ['an absurd count', { available: MAX_AVAILABLE + 1 }, 'body.available'],
    ['a missing field', {}, 'body.available'],
    ['an extra field', { available: 1, reserved: 3 }, 'body.reserved'],
  ]
  it.each(badBodies)(
    'when the body has %s, then 400 names %s and nothing is written',
    async (_, payload, path) => {
      const before = await stockRows()
      const sku = newSku()

      const res = await app.inject({ method: 'PUT', url: `/stock/${sku}`, payload: payload as object })

      expect(res.statusCode).toBe(400)
      const body = res.json<{ error: string; details: { path: string; issue: string }[] }>()
      expect(body.error).toBe('Bad Request')
      expect(body.details.map((d) => d.path)).toContain(path)
      expect(await stockRows()).toBe(before)
    },
  )

  const badSkus: [string, string][] = [
    ['a space', 'bad%20sku'],
    ['a NUL byte', 'MUG%00'],
    ['65 characters', 'A'.repeat(65)],
    ['a leading dash', '-MUG'],
  ]
  it.each(badSkus)('when the sku has %s, then PUT and GET answer 400 naming params.sku', async (_, sku) => {
    const before = await stockRows()

    const put = await app.inject({ method: 'PUT', url: `/stock/${sku}`, payload: { available: 1 } })
    const get = await app.inject({ method: 'GET', url: `/stock/${sku}` })

    for (const res of [put, get]) {
      expect(res.statusCode).toBe(400)
      expect(res.json<{ details: { path: string }[] }>().details.map((d) => d.path)).toContain('params.sku')
    }
    expect(await stockRows()).toBe(before)
  })

  it('when the body is not JSON, then 400 and nothing is written', async () => {
    const before = await stockRows()
    const res = await app.inject({
      method: 'PUT',
      url: `/stock/${newSku()}`,
      headers: { 'content-type': 'application/json' },
      payload: '{"available": ',
    })
    expect(res.statusCode).toBe(400)
    expect(await stockRows()).toBe(before)
  })
})

describe('bad input on the wire', () => {
  it('when /stock/:sku has a sku over 100 characters, then 414 in the one error shape and nothing is written', async () => {
    const before = await stockRows()
    const response = await app.inject({
      method: 'PUT',
      url: `/stock/${'x'.repeat(101)}`,
      payload: { available: 1 },
    })
    expect(response.statusCode).toBe(414)
    expect(response.json()).toEqual({
      error: 'URI Too Long',
      message: 'A path parameter is longer than 100 characters',
      details: [{ path: 'params', issue: 'is longer than 100 characters' }],
    })
    expect(await stockRows()).toBe(before)
  })
})
