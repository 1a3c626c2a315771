import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createServiceApp } from './app.js'

async function appWithQuery() {
  const app = await createServiceApp({ service: 'kit-test', logLevel: 'silent' })
  const querystring = z.strictObject({
    limit: z.coerce.number().int().default(20),
    tag: z.array(z.string()).optional(),
  })
  app.get('/things', { schema: { querystring } }, (request) => request.query)
  app.get('/plain', () => ({ ok: true }))
  await app.ready()
  return app
}

describe('a query parameter given more than once', () => {
  it('when a one-value parameter is repeated, then 400 names it and how often it came', async () => {
    const app = await appWithQuery()
    const response = await app.inject({ method: 'GET', url: '/things?limit=10&limit=20' })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({
      error: 'Bad Request',
      message: 'The query parameter limit is given 2 times; give it once',
      details: [{ path: 'querystring.limit', issue: 'is repeated (2 values)' }],
    })
    await app.close()
  })

  it('when the route declares the parameter a list, then repeats are its values', async () => {
    const app = await appWithQuery()
    const response = await app.inject({ method: 'GET', url: '/things?tag=a&tag=b&limit=3' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ limit: 3, tag: ['a', 'b'] })
    await app.close()
  })

  it('when a route has no query schema, then a repeated parameter is refused as well', async () => {
    const app = await appWithQuery()
    const response = await app.inject({ method: 'GET', url: '/plain?x=1&x=2' })
    expect(response.statusCode).toBe(400)
    expect(response.json<{ details: unknown[] }>().details).toEqual([
      { path: 'querystring.x', issue: 'is repeated (2 values)' },
    ])
    await app.close()
  })
})
