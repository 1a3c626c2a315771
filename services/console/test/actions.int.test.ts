import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { OrderedKeysPage } from '../src/api-types.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { blockedOrderedKey, startStubFleet, type StubFleet } from './support/stubs.js'

const TOKEN = `tok-${randomUUID()}`

/** The session of `ada` signed in with the admin token. */
const OPERATOR_ADA = {
  signedIn: true,
  actor: 'ada',
  role: 'operator',
  writesEnabled: true,
  signInEnabled: true,
  readsNeedSignIn: false,
}

let fleet: StubFleet | undefined
let console_: RunningConsole | undefined

afterEach(async () => {
  await console_?.close()
  await fleet?.close()
  console_ = undefined
  fleet = undefined
})

async function start(env: Record<string, string> = { ADMIN_TOKEN: TOKEN }) {
  fleet = await startStubFleet()
  console_ = await startConsole({ ...fleet.env, ...env })
  return { fleet, url: console_.url }
}

/** A request as the console's own page sends it: same origin, JSON, with `cookie` when given. */
function write(url: string, path: string, body: unknown, cookie?: string, method = 'POST') {
  const headers: Record<string, string> = { origin: url, 'content-type': 'application/json' }
  if (cookie !== undefined) headers.cookie = cookie
  return fetch(`${url}${path}`, { method, headers, body: JSON.stringify(body) })
}

async function signIn(url: string, actor = 'ada') {
  const response = await write(url, '/api/session', { actor, token: TOKEN })
  expect(response.status).toBe(200)
  const setCookie = response.headers.get('set-cookie') ?? ''
  return { response, setCookie, cookie: setCookie.split(';')[0] ?? '' }
}

describe('the session', () => {
  it('when signed in with the admin token, then an HttpOnly SameSite=Strict cookie holds a random id, never the token', async () => {
    const { url } = await start()
    const { response, setCookie, cookie } = await signIn(url)
    expect(setCookie).toMatch(/^saga_console_session=[A-Za-z0-9_-]{43};/)
    expect(setCookie).toMatch(/HttpOnly/)
    expect(setCookie).toMatch(/SameSite=Strict/)
    expect(setCookie).not.toContain(TOKEN)
    expect(JSON.stringify(await response.json())).not.toContain(TOKEN)
    const session = await (await fetch(`${url}/api/session`, { headers: { cookie } })).json()
    expect(session).toEqual(OPERATOR_ADA)
    const second = await signIn(url)
    expect(second.cookie).not.toBe(cookie)
  })

  it('when the token is wrong, then 401 and no cookie', async () => {
    const { url } = await start()
    const response = await write(url, '/api/session', { actor: 'ada', token: 'wrong-token-wrong-token' })
    expect(response.status).toBe(401)
    expect(response.headers.get('set-cookie')).toBeNull()
    expect(response.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('when the console has no ADMIN_TOKEN, then it is read-only: sign-in is 403 and the session says so', async () => {
    const { url } = await start({})
    const response = await write(url, '/api/session', { actor: 'ada', token: TOKEN })
    expect(response.status).toBe(403)
    expect(((await response.json()) as { message: string }).message).toBe(
      'admin writes are disabled: set ADMIN_TOKEN',
    )
    expect(await (await fetch(`${url}/api/session`)).json()).toEqual({
      signedIn: false,
      actor: null,
      role: null,
      writesEnabled: false,
      signInEnabled: false,
      readsNeedSignIn: false,
    })
  })

  it('when signing in from another origin or without JSON, then 403 or 415', async () => {
    const { url } = await start()
    const crossSite = await fetch(`${url}/api/session`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ actor: 'ada', token: TOKEN }),
    })
    expect(crossSite.status).toBe(403)
    const form = await fetch(`${url}/api/session`, {
      method: 'POST',
      headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' },
      body: `actor=ada&token=${TOKEN}`,
    })
    expect(form.status).toBe(415)
  })

  it('when an actor has characters the services refuse, then 400', async () => {
    const { url } = await start()
    const response = await write(url, '/api/session', { actor: 'ada<script>', token: TOKEN })
    expect(response.status).toBe(400)
  })

  it('when signed out, then the cookie no longer acts', async () => {
    const { url } = await start()
    const { cookie } = await signIn(url)
    const out = await fetch(`${url}/api/session`, { method: 'DELETE', headers: { origin: url, cookie } })
    expect(out.status).toBe(200)
    const action = await write(
      url,
      '/api/actions',
      { kind: 'retry', service: 'payment', ids: ['1'], dryRun: true },
      cookie,
    )
    expect(action.status).toBe(401)
  })
})

describe('sign-in limits', () => {
  it('when one address fails to sign in 5 times within a minute, then it is refused 429 even with the right token', async () => {
    const { url } = await start()
    for (let i = 0; i < 5; i++) {
      const wrong = await write(url, '/api/session', { actor: 'mallory', token: `guess-${i}-guess-guess` })
      expect(wrong.status).toBe(401)
    }
    const limited = await write(url, '/api/session', { actor: 'ada', token: TOKEN })
    expect(limited.status).toBe(429)
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(limited.headers.get('set-cookie')).toBeNull()
  })

  const from = (url: string, address: string, token: string) =>
    fetch(`${url}/api/session`, {
      method: 'POST',
      headers: { origin: url, 'content-type': 'application/json', 'x-forwarded-for': address },
      body: JSON.stringify({ actor: 'someone', token }),
    })

  it('when the console trusts its proxy (CONSOLE_TRUST_PROXY), then each forwarded client has its own limit', async () => {
    const { url } = await start({ ADMIN_TOKEN: TOKEN, CONSOLE_TRUST_PROXY: '127.0.0.1,::1' })
    for (let i = 0; i < 5; i++)
      expect((await from(url, '203.0.113.7', `guess-${i}-guess-guess`)).status).toBe(401)
    expect((await from(url, '203.0.113.7', TOKEN)).status).toBe(429)
    expect((await from(url, '198.51.100.9', TOKEN)).status).toBe(200)
  })

  it('when the console trusts no proxy (the default), then X-Forwarded-For does not escape the limit', async () => {
    const { url } = await start()
    for (let i = 0; i < 5; i++)
      expect((await from(url, '203.0.113.7', `guess-${i}-guess-guess`)).status).toBe(401)
    expect((await from(url, '198.51.100.9', TOKEN)).status).toBe(429)
  })
})

describe('POST /api/actions', () => {
  it('when a signed-in actor requeues as a dry run, then the service gets the token, the actor and the dry run, and the outcomes come back', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url, 'ada lovelace')
    const ids = [randomUUID(), randomUUID()]
    const response = await write(
      url,
      '/api/actions',
      { kind: 'requeue', service: 'inventory', queue: 'inventory.q.dlq', ids, dryRun: true },
      cookie,
    )
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body).toEqual({
      dryRun: true,
      actionId: null,
      results: ids.map((messageId) => ({ messageId, outcome: 'would-requeue' })),
    })
    const sent = fleet.stubs.inventory.received.find(
      (r) => r.path === '/admin/messaging/dead-letters/requeue',
    )
    expect(sent?.headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(sent?.headers['x-admin-actor']).toBe('ada lovelace')
    expect(sent?.headers['x-admin-role']).toBe('operator')
    expect(sent?.body).toEqual({ queue: 'inventory.q.dlq', messageIds: ids, dryRun: true })
    expect(JSON.stringify(body)).not.toContain(TOKEN)
  })

  it('when retrying parked rows and discarding dead letters for real, then each goes to its route on its service', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const retry = await write(
      url,
      '/api/actions',
      { kind: 'retry', service: 'payment', ids: ['a', 'b'], dryRun: false },
      cookie,
    )
    expect(await retry.json()).toMatchObject({
      dryRun: false,
      actionId: '8',
      results: [
        { id: 'a', outcome: 'retried' },
        { id: 'b', outcome: 'retried' },
      ],
    })
    const discard = await write(
      url,
      '/api/actions',
      { kind: 'discard', service: 'shipment', queue: 'q', ids: ['m'], dryRun: false },
      cookie,
    )
    expect(await discard.json()).toMatchObject({ results: [{ messageId: 'm', outcome: 'discarded' }] })
    expect(
      fleet.stubs.payment.received.find((r) => r.path === '/admin/messaging/parked/retry')?.body,
    ).toEqual({ ids: ['a', 'b'], dryRun: false })
    expect(fleet.stubs.shipment.count('/admin/messaging/dead-letters/discard')).toBe(1)
  })
})

describe('POST /api/actions, cancel', () => {
  it('when cancelling orders, then each goes to the order service admin route and a refused one says why', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const [pending, confirmed] = [randomUUID(), randomUUID()]
    fleet.stubs.order.behaviour.answers.set(`/admin/orders/${confirmed}/cancel`, {
      status: 409,
      body: { error: 'Conflict', message: `Order ${confirmed} is CONFIRMED`, details: [] },
    })
    const response = await write(
      url,
      '/api/actions',
      { kind: 'cancel', service: 'order', ids: [pending, confirmed], dryRun: true },
      cookie,
    )
    expect(await response.json()).toEqual({
      dryRun: true,
      actionId: null,
      results: [
        { id: pending, outcome: 'would-cancel', status: 200, message: null, actionId: null, details: [] },
        {
          id: confirmed,
          outcome: 'not-pending',
          status: 409,
          message: `Order ${confirmed} is CONFIRMED`,
          actionId: null,
          details: [],
        },
      ],
    })
    expect(
      fleet.stubs.order.received.find((r) => r.path === `/admin/orders/${pending}/cancel`)?.body,
    ).toEqual({ dryRun: true })
  })

  it('when one order is cancelled for real, then the action the order service recorded is passed on', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const id = randomUUID()
    fleet.stubs.order.behaviour.answers.set(`/admin/orders/${id}/cancel`, {
      status: 200,
      body: { dryRun: false, actionId: '41', outcome: 'cancelled' },
    })
    const response = await write(
      url,
      '/api/actions',
      { kind: 'cancel', service: 'order', ids: [id], dryRun: false },
      cookie,
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      dryRun: false,
      actionId: '41',
      results: [{ id, outcome: 'cancelled', status: 200, message: null, actionId: '41', details: [] }],
    })
  })

  it('when several orders are cancelled for real, then each result names its recorded action and the answer names none', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const [first, second, gone] = [randomUUID(), randomUUID(), randomUUID()]
    for (const [id, actionId] of [
      [first, '51'],
      [second, '52'],
    ] as const)
      fleet.stubs.order.behaviour.answers.set(`/admin/orders/${id}/cancel`, {
        status: 200,
        body: { dryRun: false, actionId, outcome: 'cancelled' },
      })
    fleet.stubs.order.behaviour.answers.set(`/admin/orders/${gone}/cancel`, {
      status: 404,
      body: { error: 'Not Found', message: `Order ${gone} not found`, details: [] },
    })
    const response = await write(
      url,
      '/api/actions',
      { kind: 'cancel', service: 'order', ids: [first, second, gone], dryRun: false },
      cookie,
    )
    const body = (await response.json()) as {
      actionId: string | null
      results: { actionId: string | null }[]
    }
    expect(body.actionId).toBeNull()
    expect(body.results.map((r) => r.actionId)).toEqual(['51', '52', null])
  })

  it('when the order service refuses an id as invalid, then its details come back in the outcome', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const details = [{ path: 'params.id', issue: 'Invalid UUID' }]
    fleet.stubs.order.behaviour.answers.set('/admin/orders/nope/cancel', {
      status: 400,
      body: { error: 'Bad Request', message: 'The request is invalid', details },
    })
    const response = await write(
      url,
      '/api/actions',
      { kind: 'cancel', service: 'order', ids: ['nope'], dryRun: true },
      cookie,
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({
      dryRun: true,
      actionId: null,
      results: [
        {
          id: 'nope',
          outcome: 'failed',
          status: 400,
          message: 'The request is invalid',
          actionId: null,
          details,
        },
      ],
    })
  })
})

describe('POST /api/actions, refused', () => {
  it('when a write comes without a session, from another origin or not as JSON, then it is refused and no service is asked', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const body = { kind: 'retry', service: 'payment', ids: ['a'], dryRun: false }
    expect((await write(url, '/api/actions', body)).status).toBe(401)
    const crossSite = await fetch(`${url}/api/actions`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    })
    expect(crossSite.status).toBe(403)
    const noOrigin = await fetch(`${url}/api/actions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify(body),
    })
    expect(noOrigin.status).toBe(403)
    const plain = await fetch(`${url}/api/actions`, {
      method: 'POST',
      headers: { origin: url, 'content-type': 'text/plain', cookie },
      body: JSON.stringify(body),
    })
    expect(plain.status).toBe(415)
    expect(fleet.stubs.payment.count('/admin/messaging/parked/retry')).toBe(0)
  })

  it('when the body misses what its kind needs, then 400 naming the field', async () => {
    const { url } = await start()
    const { cookie } = await signIn(url)
    const requeue = await write(
      url,
      '/api/actions',
      { kind: 'requeue', service: 'payment', ids: ['a'], dryRun: true },
      cookie,
    )
    expect(requeue.status).toBe(400)
    expect(((await requeue.json()) as { details: { path: string }[] }).details.map((d) => d.path)).toContain(
      'body.queue',
    )
    const cancel = await write(
      url,
      '/api/actions',
      { kind: 'cancel', service: 'payment', ids: ['a'], dryRun: true },
      cookie,
    )
    expect(cancel.status).toBe(400)
  })

  it('when the service refuses the action, then its answer is passed on', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const refusal = { error: 'Unauthorized', message: 'wrong bearer token', details: [] }
    fleet.stubs.payment.behaviour.answers.set('/admin/messaging/parked/retry', { status: 401, body: refusal })
    const response = await write(
      url,
      '/api/actions',
      { kind: 'retry', service: 'payment', ids: ['a'], dryRun: true },
      cookie,
    )
    expect(response.status).toBe(401)
    expect(await response.json()).toEqual(refusal)
  })
})

describe('GET /api/actions', () => {
  it('when services have recorded actions, then they are merged newest first with their service', async () => {
    const { url, fleet } = await start()
    await fleet.stubs.shipment.close()
    const body = (await (await fetch(`${url}/api/actions`)).json()) as {
      actions: { service: string; at: string }[]
      sources: Record<string, { ok: boolean }>
    }
    expect(body.actions).toHaveLength(3)
    expect(new Set(body.actions.map((a) => a.service))).toEqual(new Set(['order', 'payment', 'inventory']))
    expect(body.sources.shipment?.ok).toBe(false)
  })
})

describe('two roles', () => {
  const VIEWER_TOKEN = `viewer-${randomUUID()}`

  it('when a viewer signs in with the viewer token, then the session says viewer and every action is refused 403 before any service is asked', async () => {
    const { url, fleet } = await start({ ADMIN_TOKEN: TOKEN, CONSOLE_VIEWER_TOKEN: VIEWER_TOKEN })
    const signIn = await write(url, '/api/session', { actor: 'vera', token: VIEWER_TOKEN })
    expect(signIn.status).toBe(200)
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    expect(await signIn.json()).toEqual({
      signedIn: true,
      actor: 'vera',
      role: 'viewer',
      writesEnabled: true,
      signInEnabled: true,
      readsNeedSignIn: true,
    })
    const asked = fleet.stubs.inventory.received.length
    const refusals = [
      await write(
        url,
        '/api/actions',
        { kind: 'discard', service: 'inventory', queue: 'q', ids: ['x'], dryRun: false },
        cookie,
      ),
      await write(url, '/api/bulk', { kind: 'requeue', filter: {}, dryRun: true }, cookie),
      await write(url, `/api/bulk/${randomUUID()}/stop`, {}, cookie),
      await write(
        url,
        '/api/ordered-keys/skip',
        { service: 'inventory', handler: 'h', producer: 'p', key: 'k', dryRun: true },
        cookie,
      ),
    ]
    for (const response of refusals) {
      expect(response.status).toBe(403)
      expect(await response.json()).toEqual({
        error: 'Forbidden',
        message: 'Viewers may not act: sign in with the operator token',
        details: [{ path: 'session.role', issue: 'is viewer; only an operator acts' }],
      })
    }
    expect(fleet.stubs.inventory.received.filter((r) => r.method === 'POST').length).toBe(0)
    expect(fleet.stubs.inventory.received.length).toBeGreaterThanOrEqual(asked)
  })

  it('when the viewer token is set, then every read but the session answers 401 without a session, and 200 to a viewer', async () => {
    const { url } = await start({ ADMIN_TOKEN: TOKEN, CONSOLE_VIEWER_TOKEN: VIEWER_TOKEN })
    const reads = ['/api/fleet', '/api/orders', `/api/orders/${randomUUID()}`, '/api/actions', '/api/live']
    for (const path of reads) {
      const response = await fetch(`${url}${path}`)
      expect(response.status, path).toBe(401)
      expect(await response.json(), path).toEqual({
        error: 'Unauthorized',
        message: 'Sign in to read: this console asks for the viewer or the operator token',
        details: [{ path: 'cookies.session', issue: 'no live session' }],
      })
    }
    expect(await (await fetch(`${url}/api/session`)).json()).toMatchObject({
      signedIn: false,
      readsNeedSignIn: true,
    })
    // The page itself loads, so the sign-in form can be shown.
    expect((await fetch(`${url}/orders`)).status).toBe(200)

    const signIn = await write(url, '/api/session', { actor: 'vera', token: VIEWER_TOKEN })
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
    const fleetRead = await fetch(`${url}/api/fleet`, { headers: { cookie } })
    expect(fleetRead.status).toBe(200)
    expect(((await fleetRead.json()) as { services: unknown[] }).services).toHaveLength(4)
  })

  it('when only the admin token is set, then reads stay open without a session', async () => {
    const { url } = await start()
    expect((await fetch(`${url}/api/fleet`)).status).toBe(200)
  })

  it('when only the viewer token is set, then a viewer signs in and the console stays without writes', async () => {
    const { url } = await start({ CONSOLE_VIEWER_TOKEN: VIEWER_TOKEN })
    const signIn = await write(url, '/api/session', { actor: 'vera', token: VIEWER_TOKEN })
    expect(await signIn.json()).toMatchObject({ role: 'viewer', writesEnabled: false, signInEnabled: true })
    const operator = await write(url, '/api/session', { actor: 'otto', token: TOKEN })
    expect(operator.status).toBe(401)
  })
})

describe('POST /api/bulk', () => {
  it('when a bulk requeue is dry run, then each service is asked with the filter, the actor and role, and the counts are summed', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    fleet.stubs.payment.behaviour.answers.set('/admin/messaging/bulk', {
      status: 200,
      body: {
        service: 'payment',
        dryRun: true,
        kind: 'requeue',
        matched: 7,
        scanned: 9,
        complete: true,
        sample: [],
      },
    })
    fleet.stubs.inventory.behaviour.answers.set('/admin/messaging/bulk', {
      status: 404,
      body: { error: 'Not Found', message: 'no handler', details: [] },
    })
    const filter = { handler: 'capture-payment-when-order-created', reason: 'timeout' }
    const response = await write(
      url,
      '/api/bulk',
      { kind: 'requeue', services: ['payment', 'inventory'], filter, dryRun: true },
      cookie,
    )
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({
      dryRun: true,
      matched: 7,
      services: [
        { service: 'payment', matched: 7, error: null },
        { service: 'inventory', matched: 0, error: null },
      ],
    })
    const sent = fleet.stubs.payment.received.find((r) => r.path === '/admin/messaging/bulk')
    expect(sent?.body).toEqual({ kind: 'requeue', filter, dryRun: true, limit: 1_000, ratePerSecond: 50 })
    expect(sent?.headers['x-admin-role']).toBe('operator')
    expect(fleet.stubs.order.count('/admin/messaging/bulk')).toBe(0)
  })

  it('when a bulk request is invalid, then 400 in the error shape naming the field and no service is asked', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const refused = async (body: unknown, path: string) => {
      const response = await write(url, '/api/bulk', body, cookie)
      expect(response.status).toBe(400)
      const error = (await response.json()) as { error: string; details: Array<{ path: string }> }
      expect(error.error).toBe('Bad Request')
      expect(error.details.map((d) => d.path)).toContain(path)
    }
    await refused({ kind: 'requeue', filter: { colour: 'red' }, dryRun: true }, 'body.filter.colour')
    await refused({ kind: 'requeue', filter: { since: 'yesterday' }, dryRun: true }, 'body.filter.since')
    await refused({ kind: 'retry', filter: { handler: 'h' }, dryRun: true }, 'body.filter.handler')
    await refused({ kind: 'cancel', filter: { reason: 'x' }, dryRun: true }, 'body.filter.reason')
    await refused({ kind: 'cancel', services: ['payment'], filter: {}, dryRun: true }, 'body.services')
    await refused({ kind: 'requeue', filter: {}, dryRun: true, ratePerSecond: 0 }, 'body.ratePerSecond')
    for (const service of ['order', 'payment', 'inventory', 'shipment'] as const)
      expect(fleet.stubs[service].count('/admin/messaging/bulk')).toBe(0)
  })
})

describe('POST /api/bulk, run, progress and stop', () => {
  /** A service's bulk job as the stubs answer it. */
  const job = (id: string, state: string, done: number, actionId: string | null = null) => ({
    id,
    action: 'order.cancel',
    filter: {},
    state,
    limit: 1_000,
    ratePerSecond: 20,
    matched: 12,
    done,
    failed: 0,
    startedAt: new Date().toISOString(),
    endedAt: null,
    actionId,
    error: null,
  })

  it('when PENDING orders are cancelled in bulk, then only the order service is asked, progress is read from its job, and a stop reaches it', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const jobId = randomUUID()
    const order = fleet.stubs.order.behaviour.answers
    order.set('/admin/orders/bulk-cancel', {
      status: 202,
      body: { dryRun: false, job: job(jobId, 'running', 0) },
    })
    order.set(`/admin/orders/bulk-cancel/${jobId}`, { status: 200, body: { job: job(jobId, 'running', 5) } })
    order.set(`/admin/orders/bulk-cancel/${jobId}/stop`, {
      status: 200,
      body: { job: job(jobId, 'stopping', 5) },
    })
    const filter = { waitingFor: 'shipment', placedBefore: '2026-12-01T00:00:00.000Z' }
    const started = await write(
      url,
      '/api/bulk',
      { kind: 'cancel', filter, dryRun: false, ratePerSecond: 20 },
      cookie,
    )
    expect(started.status).toBe(202)
    const progress = (await started.json()) as { id: string; state: string; done: number; matched: number }
    expect(progress).toMatchObject({ state: 'running', done: 5, matched: 12 })
    const sent = fleet.stubs.order.received.find((r) => r.path === '/admin/orders/bulk-cancel')
    expect(sent?.body).toEqual({ filter, dryRun: false, limit: 1_000, ratePerSecond: 20 })
    expect(sent?.headers['x-admin-role']).toBe('operator')
    for (const service of ['payment', 'inventory', 'shipment'] as const)
      expect(fleet.stubs[service].count('/admin/messaging/bulk')).toBe(0)

    order.set(`/admin/orders/bulk-cancel/${jobId}`, {
      status: 200,
      body: { job: job(jobId, 'stopped', 5, '41') },
    })
    const stopped = await write(url, `/api/bulk/${progress.id}/stop`, {}, cookie)
    expect(stopped.status).toBe(200)
    expect(fleet.stubs.order.count(`/admin/orders/bulk-cancel/${jobId}/stop`)).toBe(1)
    expect(await stopped.json()).toMatchObject({ state: 'stopped', done: 5, actionIds: ['order:41'] })
    const unknown = await fetch(`${url}/api/bulk/${randomUUID()}`)
    expect(unknown.status).toBe(404)
  })
})

describe('ordered keys', () => {
  it('when a service has a blocked key and another does not answer, then the key is listed with its service and the other named', async () => {
    const { url, fleet } = await start()
    const key = blockedOrderedKey()
    fleet.stubs.inventory.behaviour.answers.set('/admin/messaging/ordered-keys', {
      status: 200,
      body: { service: 'inventory', keys: [key] },
    })
    const down = { error: 'Internal Server Error', message: 'boom', details: [] }
    fleet.stubs.shipment.behaviour.answers.set('/admin/messaging/ordered-keys', { status: 500, body: down })
    const response = await fetch(`${url}/api/ordered-keys`)
    expect(response.status).toBe(200)
    const page = (await response.json()) as OrderedKeysPage
    expect(page.keys).toEqual([{ ...key, service: 'inventory' }])
    expect(page.sources).toMatchObject({
      inventory: { ok: true },
      order: { ok: true },
      shipment: { ok: false },
    })
    expect(page.sources.shipment?.reason).toContain('500')
  })
})

describe('ordered keys skipped', () => {
  it('when an operator skips a key, then the dry run and the skip reach its service with the actor and role, and the answers come back', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url, 'ada')
    const target = { handler: 'apply-stock-change', producer: 'order', key: randomUUID() }
    const dry = await write(
      url,
      '/api/ordered-keys/skip',
      { service: 'inventory', ...target, dryRun: true },
      cookie,
    )
    expect(await dry.json()).toEqual({
      dryRun: true,
      actionId: null,
      results: [{ outcome: 'would-skip', from: '3', to: '4', skipped: null }],
    })
    const done = await write(
      url,
      '/api/ordered-keys/skip',
      { service: 'inventory', ...target, dryRun: false },
      cookie,
    )
    expect(await done.json()).toMatchObject({
      dryRun: false,
      actionId: '10',
      results: [{ outcome: 'skipped' }],
    })
    const sent = fleet.stubs.inventory.received.filter((r) => r.path === '/admin/messaging/ordered-keys/skip')
    expect(sent.map((r) => r.body)).toEqual([
      { ...target, dryRun: true },
      { ...target, dryRun: false },
    ])
    expect(sent[1]?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'x-admin-actor': 'ada',
      'x-admin-role': 'operator',
    })
  })

  it('when a skip misses its key or names no service, then 400 naming the field and no service is asked', async () => {
    const { url, fleet } = await start()
    const { cookie } = await signIn(url)
    const missing = await write(
      url,
      '/api/ordered-keys/skip',
      { service: 'inventory', handler: 'h', producer: 'p', dryRun: true },
      cookie,
    )
    expect(missing.status).toBe(400)
    expect(JSON.stringify(await missing.json())).toContain('key')
    const unknown = await write(
      url,
      '/api/ordered-keys/skip',
      { service: 'billing', handler: 'h', producer: 'p', key: 'k', dryRun: true },
      cookie,
    )
    expect(unknown.status).toBe(400)
    for (const stub of Object.values(fleet.stubs))
      expect(stub.count('/admin/messaging/ordered-keys/skip')).toBe(0)
  })
})
