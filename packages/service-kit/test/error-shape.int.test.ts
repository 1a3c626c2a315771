import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createServiceApp, type ServiceApp } from '../src/app.js'
import { errorResponses } from '../src/error-schemas.js'

// Every kind of error a service sends, the framework's own included, walked through one app: each
// must come back in the one documented shape (4xx `{ error, message, details: [{ path, issue }] }`,
// 5xx `{ error, message, requestId }`), saying what is wrong without echoing the request.
let app: ServiceApp

beforeAll(async () => {
  app = await createServiceApp({ service: 'kit-shape', logLevel: 'silent', bodyLimit: 1_024 })
  const thing = z.object({ name: z.string().min(1) })
  app.post(
    '/things',
    { schema: { body: thing, response: { 200: thing, ...errorResponses(400, 413, 415, 500) } } },
    (request) => request.body,
  )
  // A route that takes no body, like POST /orders/:id/cancel.
  app.post('/things/:id/archive', { schema: { params: z.object({ id: z.string() }) } }, () => ({
    archived: true,
  }))
  app.get(
    '/things/:id',
    {
      schema: {
        params: z.object({ id: z.string() }),
        response: { 200: z.object({}), ...errorResponses(400, 404, 414) },
      },
    },
    () => ({}),
  )
  app.get('/boom', () => {
    throw new Error('internal detail')
  })
  await app.ready()
})

afterAll(async () => {
  await app.close()
})

const json = { 'content-type': 'application/json' }

/** POSTs `payload` to /things with `headers` (a JSON content type unless told otherwise). */
const postThing = (payload: InjectOptions['payload'], headers: InjectOptions['headers'] = json) =>
  app.inject({ method: 'POST', url: '/things', headers, payload })

const cases: [string, number, InjectOptions][] = [
  ['no route', 404, { method: 'GET', url: '/nowhere' }],
  ['a method its path does not serve', 405, { method: 'DELETE', url: '/things/7' }],
  ['a body failing its schema', 400, { method: 'POST', url: '/things', payload: { name: '' } }],
  ['malformed JSON', 400, { method: 'POST', url: '/things', headers: json, payload: '{"name":' }],
  ['an empty JSON body', 400, { method: 'POST', url: '/things', headers: json, payload: '' }],
  ['no body and no content type', 400, { method: 'POST', url: '/things' }],
  [
    'a text/plain body on a JSON route',
    415,
    { method: 'POST', url: '/things', headers: { 'content-type': 'text/plain' }, payload: '{"name":"x"}' },
  ],
  [
    'bytes that are not UTF-8',
    400,
    { method: 'POST', url: '/things', headers: json, payload: Buffer.from('{"name":"A\xffB"}', 'latin1') },
  ],
  [
    'a charset other than UTF-8',
    415,
    {
      method: 'POST',
      url: '/things',
      headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      payload: '{"name":"x"}',
    },
  ],
  [
    'a __proto__ key',
    400,
    { method: 'POST', url: '/things', headers: json, payload: '{"__proto__":{"a":1}}' },
  ],
  [
    'a constructor.prototype key',
    400,
    { method: 'POST', url: '/things', headers: json, payload: '{"name":"x","constructor":{"prototype":{}}}' },
  ],
  [
    'a media type nobody parses',
    415,
    { method: 'POST', url: '/things', headers: { 'content-type': 'text/xml' }, payload: '<a/>' },
  ],
  ['a body over the limit', 413, { method: 'POST', url: '/things', payload: { name: 'x'.repeat(2_000) } }],
  ['a path parameter over 100 characters', 414, { method: 'GET', url: `/things/${'x'.repeat(101)}` }],
  ['a broken percent-encoding in the path', 400, { method: 'GET', url: '/things/%E0%A4%A' }],
  ['a handler that throws', 500, { method: 'GET', url: '/boom' }],
]

describe('every error in the one shape', () => {
  it.each(cases)(
    'when the request has %s, then %i in the documented shape',
    async (_what, status, request) => {
      const res = await app.inject(request)
      expect(res.statusCode).toBe(status)
      const body = res.json<Record<string, unknown>>()
      if (status >= 500) {
        expect(Object.keys(body).sort()).toEqual(['error', 'message', 'requestId'])
        expect(res.body).not.toContain('internal detail')
        return
      }
      expect(Object.keys(body).sort()).toEqual(['details', 'error', 'message'])
      expect(body.error).toBe(res.raw.res.statusMessage)
      expect(typeof body.message).toBe('string')
      const details = body.details as unknown[]
      expect(details).toBeInstanceOf(Array)
      for (const detail of details) {
        expect(Object.keys(detail as object).sort()).toEqual(['issue', 'path'])
      }
      // Nothing of the request is echoed back whole (fastify's own 414 repeated the entire path).
      expect(res.body).not.toContain('x'.repeat(101))
    },
  )

  it('when the path exists but not with the method, then 405 with Allow listing its methods; an unknown path stays 404', async () => {
    const item = await app.inject({ method: 'DELETE', url: '/things/7?x=1' })
    expect(item.statusCode).toBe(405)
    expect(item.headers.allow).toBe('GET, HEAD')
    expect(item.json()).toEqual({
      error: 'Method Not Allowed',
      message: 'Method DELETE is not allowed on /things/7',
      details: [{ path: 'method', issue: 'allows GET, HEAD' }],
    })
    const list = await app.inject({ method: 'GET', url: '/things' })
    expect(list.statusCode).toBe(405)
    expect(list.headers.allow).toBe('POST')
    const nowhere = await app.inject({ method: 'DELETE', url: '/nowhere' })
    expect(nowhere.statusCode).toBe(404)
    expect(nowhere.headers.allow).toBeUndefined()
    expect(nowhere.json()).toMatchObject({ error: 'Not Found', message: 'Route DELETE /nowhere not found' })
  })

  it('when a body is not UTF-8, then 400 names the byte and its offset', async () => {
    const res = await postThing(Buffer.from([...Buffer.from('{"name":"A'), 0xff, ...Buffer.from('B"}')]))
    expect(res.json()).toEqual({
      error: 'Bad Request',
      message: 'The body is not valid UTF-8',
      details: [{ path: 'body', issue: 'byte 0xff at offset 10 is not valid UTF-8' }],
    })
  })

  it('when a body holds __proto__ or constructor.prototype, then 400 says which key is refused and where', async () => {
    const proto = await postThing('{"name":"x","nested":{"__proto__":{"admin":true}}}')
    expect(proto.json()).toMatchObject({
      message: "The body holds a '__proto__' key, which is refused (it could pollute prototypes)",
      details: [{ path: 'body.nested.__proto__', issue: 'is not an allowed key' }],
    })
    const ctor = await postThing('{"constructor":{"prototype":{"admin":true}}}')
    expect(ctor.json()).toMatchObject({
      message: "The body holds a 'constructor.prototype' key, which is refused (it could pollute prototypes)",
      details: [{ path: 'body.constructor.prototype', issue: 'is not an allowed key' }],
    })
  })

  it('when a route needs a body and none is sent, without or with a JSON content type, then the same 400 says the body is empty', async () => {
    const empty = {
      error: 'Bad Request',
      message: 'The body is empty; send a JSON document',
      details: [{ path: 'body', issue: 'is empty' }],
    }
    const none = await app.inject({ method: 'POST', url: '/things' })
    expect(none.statusCode).toBe(400)
    expect(none.json()).toEqual(empty)
    const emptyJson = await postThing('')
    expect(emptyJson.json()).toEqual(empty)
  })

  it('when a JSON route gets text/plain or another type, then 415 names the type sent and application/json', async () => {
    const plain = await postThing('{"name":"x"}', { 'content-type': 'text/plain; charset=utf-8' })
    expect(plain.statusCode).toBe(415)
    expect(plain.json()).toEqual({
      error: 'Unsupported Media Type',
      message: "The body's media type 'text/plain' is not supported; send application/json",
      details: [{ path: 'headers.content-type', issue: 'must be application/json' }],
    })
    const xml = await postThing('<a/>', { 'content-type': 'text/xml' })
    expect(xml.statusCode).toBe(415)
    expect(xml.json()).toMatchObject({
      message: "The body's media type 'text/xml' is not supported; send application/json",
    })
    const untyped = await postThing('{"name":"x"}', {})
    expect(untyped.statusCode).toBe(415)
    expect(untyped.json()).toMatchObject({
      message: 'The body has no media type; send it as application/json',
    })
  })

  it('when a route takes no body, then no body is accepted with no content type, a JSON one or text/plain', async () => {
    for (const headers of [{}, json, { 'content-type': 'text/plain' }]) {
      const res = await app.inject({ method: 'POST', url: '/things/7/archive', headers })
      expect(res.statusCode, JSON.stringify(headers)).toBe(200)
      expect(res.json()).toEqual({ archived: true })
    }
  })

  it('when a path parameter is too long, then 414 says which limit without echoing the path', async () => {
    const res = await app.inject({ method: 'GET', url: `/things/${'x'.repeat(101)}` })
    expect(res.json()).toEqual({
      error: 'URI Too Long',
      message: 'A path parameter is longer than 100 characters',
      details: [{ path: 'params', issue: 'is longer than 100 characters' }],
    })
  })
})
