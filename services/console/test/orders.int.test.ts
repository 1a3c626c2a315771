import { randomBytes, randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { FleetSnapshot } from '../src/fleet.js'
import type { OrderDetail } from '../src/order-join.js'
import type { SearchAnswer } from '../src/search.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { orderFixture, orderViewOf, recordsOf, startStubFleet, type StubFleet } from './support/stubs.js'

let fleet: StubFleet | undefined
let console_: RunningConsole | undefined

afterEach(async () => {
  await console_?.close()
  await fleet?.close()
  console_ = undefined
  fleet = undefined
})

describe('GET /api/orders', () => {
  it('when filters and a cursor are given, then they are passed to the order service as they are', async () => {
    fleet = await startStubFleet([orderFixture()])
    console_ = await startConsole(fleet.env)
    const query =
      'status=PENDING&waitingFor=payment&placedAfter=2026-12-01T00:00:00.000Z&deadlineBefore=2026-12-02T00:00:00Z&limit=5&cursor=abc'
    const response = await fetch(`${console_.url}/api/orders?${query}`)
    expect(response.status).toBe(200)
    const page = (await response.json()) as { items: unknown[]; nextCursor: null }
    expect(page.items).toHaveLength(1)
    const seen = fleet.stubs.order.received.filter((r) => r.path === '/orders').at(-1)
    expect(seen?.query).toEqual({
      status: 'PENDING',
      waitingFor: 'payment',
      placedAfter: '2026-12-01T00:00:00.000Z',
      deadlineBefore: '2026-12-02T00:00:00Z',
      limit: '5',
      cursor: 'abc',
    })
  })

  it('when a filter is not one the contract knows, then 400 in the error shape and the order service is not asked', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    const response = await fetch(`${console_.url}/api/orders?waitingFor=nobody&colour=red`)
    expect(response.status).toBe(400)
    const body = (await response.json()) as { error: string; details: { path: string }[] }
    expect(body.error).toBe('Bad Request')
    expect(body.details.map((d) => d.path)).toEqual(
      expect.arrayContaining(['querystring.waitingFor', 'querystring.colour']),
    )
    expect(fleet.stubs.order.count('/orders')).toBe(0)
  })

  it('when the order service refuses the query, then its 400 is passed on', async () => {
    fleet = await startStubFleet()
    const refusal = {
      error: 'Bad Request',
      message: 'The request is invalid',
      details: [{ path: 'querystring.cursor', issue: 'bad' }],
    }
    fleet.stubs.order.behaviour.answers.set('/orders', { status: 400, body: refusal })
    console_ = await startConsole(fleet.env)
    const response = await fetch(`${console_.url}/api/orders?cursor=zzz`)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual(refusal)
  })

  it('when a service URL has a path, then the console keeps it', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole({ ...fleet.env, ORDER_URL: `${fleet.stubs.order.url}/gateway/order/` })
    await fetch(`${console_.url}/api/orders?limit=3`)
    expect(fleet.stubs.order.received.map((r) => r.path)).toContain('/gateway/order/orders')
  })

  it('when the order service does not answer in time, then 504 naming it', async () => {
    fleet = await startStubFleet()
    // The stub would answer in ten minutes: only the 200 ms timeout can answer first, however late it fires.
    fleet.stubs.order.behaviour.delayMs = 600_000
    console_ = await startConsole({ ...fleet.env, CONSOLE_UPSTREAM_TIMEOUT_MS: '200' })
    const response = await fetch(`${console_.url}/api/orders`)
    expect(response.status).toBe(504)
    const body = (await response.json()) as { message: string; requestId: string }
    expect(body.message).toBe('The order service did not answer within 200 ms')
    expect(body.requestId).toBe(response.headers.get('x-request-id'))
  })

  it('when the order service is down, then 502 saying in a sentence that it is unreachable', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    await fleet.stubs.order.close()
    const response = await fetch(`${console_.url}/api/orders`)
    expect(response.status).toBe(502)
    const body = (await response.json()) as { message: string }
    expect(body.message).toBe('The order service is unreachable (ECONNREFUSED)')
  })
})

/** Starts stubs knowing the fixture's order (and another one), and reads the order's join. */
async function joined() {
  const f = orderFixture()
  fleet = await startStubFleet([f, orderFixture()])
  console_ = await startConsole(fleet.env)
  const response = await fetch(`${console_.url}/api/orders/${f.orderId}`)
  expect(response.status).toBe(200)
  const detail = (await response.json()) as OrderDetail
  return { f, fleet, detail, byId: new Map(detail.nodes.map((n) => [n.id, n])) }
}

describe('GET /api/orders/:id, the join', () => {
  it('when the services know the order, then its facts are nodes by message id on their branch, with causation edges', async () => {
    const { f, detail, byId } = await joined()
    expect(detail.nodes.map((n) => n.routingKey)).toEqual([
      'order.created',
      'payment.processed',
      'stock.reservation-failed',
      'order.cancelled',
      'payment.refunded',
      'stock.reserved',
    ])
    expect(byId.get(f.ids.created)).toMatchObject({
      branch: 'forward',
      kind: 'step',
      producer: 'order',
      state: 'published',
    })
    expect(byId.get(f.ids.processed)).toMatchObject({
      branch: 'forward',
      producer: 'payment',
      traceId: f.orderId.replaceAll('-', ''),
    })
    expect(byId.get(f.ids.failed)).toMatchObject({
      branch: 'compensation',
      kind: 'failure',
      producer: 'inventory',
    })
    expect(byId.get(f.ids.cancelled)).toMatchObject({ branch: 'compensation', kind: 'compensation' })
    expect(byId.get(f.ids.refunded)).toMatchObject({ branch: 'compensation', kind: 'compensation' })
    expect(detail.edges).toEqual(
      expect.arrayContaining([
        { from: f.ids.created, to: f.ids.processed },
        { from: f.ids.processed, to: f.ids.failed },
        { from: f.ids.failed, to: f.ids.cancelled },
        { from: f.ids.failed, to: f.ids.refunded },
        { from: f.ids.processed, to: f.deadLetterId },
      ]),
    )
    expect(detail.edges).toHaveLength(5)
  })

  it('when the services know the order, then its consumers, dead letters, parked rows, actions and deadline are joined', async () => {
    const { f, fleet, detail, byId } = await joined()
    const consumers = byId.get(f.ids.failed)?.consumers
    expect(consumers).toEqual(
      expect.arrayContaining([
        {
          service: 'order',
          handler: 'cancel-order-when-stock-reservation-failed',
          receivedAt: '2026-12-01T12:00:03.000Z',
          expected: true,
        },
        {
          service: 'payment',
          handler: 'refund-payment-when-stock-reservation-failed',
          receivedAt: '2026-12-01T12:00:04.000Z',
          expected: true,
        },
      ]),
    )
    expect(byId.get(f.deadLetterId)?.deadLetters).toEqual([
      expect.objectContaining({
        service: 'shipment',
        queue: 'shipment.q.dlq',
        reason: 'handler threw 10 times',
      }),
    ])
    expect(detail.deadLetters.map((d) => d.messageId)).toEqual([f.deadLetterId])
    expect(detail.parked.map((p) => [p.service, p.id])).toEqual([['payment', f.parkedId]])
    // Each service's action on this order's dead letter, none of the other order's or unrelated ones.
    expect(detail.actions.map((a) => a.service).sort()).toEqual(['inventory', 'order', 'payment', 'shipment'])
    expect(detail.deadline).toEqual({
      deadlineAt: '2026-12-01T12:10:00.000Z',
      timeLeftMs: null,
      overdue: false,
    })
    expect(Object.values(detail.sources).every((s) => s.ok)).toBe(true)
    // One inbox lookup per service, for the order's message ids.
    const lookup = fleet.stubs.payment.received.find((r) => r.path === '/admin/messaging/inbox')
    expect([lookup?.query.messageId].flat()).toEqual(expect.arrayContaining(Object.values(f.ids)))
  })
})

describe('GET /api/orders/:id', () => {
  it('when a service is down, then the rest of the order is joined and the service is named with the reason', async () => {
    const f = orderFixture()
    fleet = await startStubFleet([f])
    await fleet.stubs.payment.close()
    console_ = await startConsole(fleet.env)
    const detail = (await (await fetch(`${console_.url}/api/orders/${f.orderId}`)).json()) as OrderDetail
    expect(detail.sources.payment.ok).toBe(false)
    expect(detail.sources.payment.reason).toMatch(/^unreachable \(/)
    expect(detail.sources.inventory.ok).toBe(true)
    // The payment facts are still known from the order's timeline, without their outbox details.
    expect(detail.nodes.find((n) => n.id === f.ids.processed)).toMatchObject({
      state: 'seen',
      branch: 'forward',
    })
  })

  it('when the order is unknown, then the order service 404 is passed on', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    const id = randomUUID()
    const response = await fetch(`${console_.url}/api/orders/${id}`)
    expect(response.status).toBe(404)
    expect(((await response.json()) as { message: string }).message).toBe(`Order ${id} not found`)
  })

  it('when the id is not a UUID, then 400 and no service is asked', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    const response = await fetch(`${console_.url}/api/orders/not-an-id`)
    expect(response.status).toBe(400)
    // In the order service's words (contracts' Id), not zod's "Invalid UUID".
    expect(((await response.json()) as { details: unknown[] }).details).toEqual([
      { path: 'params.id', issue: 'must be a UUID: 32 hexadecimal digits as 8-4-4-4-12' },
    ])
    expect(fleet.stubs.order.received).toHaveLength(0)
  })

  it('when the id is a UUID the order service takes but RFC 9562 does not (upper-case max), then it is asked', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    const id = 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'
    const response = await fetch(`${console_.url}/api/orders/${id}`)
    expect(response.status).toBe(404)
    expect(fleet.stubs.order.received.length).toBeGreaterThan(0)
  })
})

describe('GET /api/orders/:id, the road ahead', () => {
  it('when a running order waits for a service that is down, then its step ahead says so, since the poll that saw it down', async () => {
    const f = orderFixture()
    fleet = await startStubFleet([f])
    const { order, payment, shipment, inventory } = fleet.stubs
    // The fixture's order before inventory's step: placed and paid, PENDING.
    const view = orderViewOf(f)
    const pending = { ...view, status: 'PENDING', waitingFor: 'inventory', cancelledAt: null }
    const body = { ...pending, cancellationReason: null, failedStep: null, events: view.events.slice(0, 2) }
    order.behaviour.answers.set(`/orders/${f.orderId}`, { status: 200, body })
    const outbox = (service: 'order' | 'payment') => ({ service, outbox: recordsOf(f, service).slice(0, 1) })
    order.behaviour.answers.set('/admin/messaging/records', { status: 200, body: outbox('order') })
    payment.behaviour.answers.set('/admin/messaging/records', { status: 200, body: outbox('payment') })
    const noLetters = { service: 'shipment', queues: [] }
    shipment.behaviour.answers.set('/admin/messaging/dead-letters', { status: 200, body: noLetters })
    await inventory.close()
    console_ = await startConsole(fleet.env)

    const detail = (await (await fetch(`${console_.url}/api/orders/${f.orderId}`)).json()) as OrderDetail
    const snapshot = (await (await fetch(`${console_.url}/api/fleet`)).json()) as FleetSnapshot
    const down = snapshot.services.find((s) => s.service === 'inventory')!
    // Down since the console's first poll (it never saw it up); a later poll keeps that time.
    expect(down.health).toBe('down')
    expect(Date.parse(down.healthSince)).toBeLessThanOrEqual(Date.parse(snapshot.at))
    expect(detail.ahead.map((s) => [s.service, s.waiting, s.after])).toEqual([
      ['inventory', true, f.ids.processed],
      ['shipment', false, 'ahead:inventory:reserve-stock-when-payment-processed'],
      ['order', false, 'ahead:shipment:create-shipment-when-stock-reserved'],
    ])
    expect(detail.ahead[0]!.reasons.slice(0, 2)).toEqual([
      {
        kind: 'service',
        service: 'inventory',
        health: 'down',
        reason: down.reason,
        since: down.healthSince,
      },
      // Never read since the console started (it was down from the first poll): no queue figures.
      {
        kind: 'not-consumed',
        messageId: f.ids.processed,
        since: recordsOf(f, 'payment')[0]!.publishedAt,
        inboxRead: false,
      },
    ])
  })
})

// The console's part of a search: which service it asks for what, and where it lands. The services'
// parts (the look-ups on their databases) are tested in the order service and in messaging-admin, and
// the whole in a browser against the fleet (e2e/test/console-search.e2e.test.ts).
const search = async (text: string): Promise<SearchAnswer> => {
  const response = await fetch(`${console_!.url}/api/search?q=${encodeURIComponent(text)}`)
  expect(response.status, await response.clone().text()).toBe(200)
  return (await response.json()) as SearchAnswer
}

const row = (orderId: string) => ({ id: randomUUID(), aggregateId: orderId, correlationId: orderId })

describe('GET /api/search', () => {
  it('when the order service knows the id, then the console lands on the order and asks no outbox', async () => {
    fleet = await startStubFleet()
    const orderId = randomUUID()
    fleet.stubs.order.behaviour.answers.set('/orders/lookup', {
      status: 200,
      body: { matches: [{ kind: 'message', orderId }] },
    })
    console_ = await startConsole(fleet.env)
    const messageId = randomUUID()
    const answer = await search(` ${messageId.toUpperCase()} `)
    expect(answer).toMatchObject({
      to: `/orders/${orderId}`,
      matches: [{ kind: 'message', service: 'order' }],
    })
    expect(fleet.stubs.order.received.find((r) => r.path === '/orders/lookup')?.query).toEqual({
      id: messageId.toUpperCase(),
    })
    for (const stub of Object.values(fleet.stubs)) expect(stub.count('/admin/messaging/records/find')).toBe(0)
  })

  it('when the order service is down, then a trace id is still found in the outboxes and the order service is named', async () => {
    fleet = await startStubFleet()
    const orderId = randomUUID()
    const traceId = randomBytes(16).toString('hex')
    fleet.stubs.order.behaviour.answers.set('/orders/lookup', { status: 500, body: { message: 'down' } })
    for (const service of ['payment', 'inventory'] as const)
      fleet.stubs[service].behaviour.answers.set('/admin/messaging/records/find', {
        status: 200,
        body: { service, outbox: [row(orderId)] },
      })
    console_ = await startConsole(fleet.env)
    const answer = await search(traceId)
    expect(answer.to).toBe(`/orders/${orderId}`)
    expect(answer.matches.map((m) => [m.kind, m.orderId])).toEqual([['trace', orderId]])
    expect(answer.unanswered.map((u) => u.service)).toContain('order')
    expect(
      fleet.stubs.payment.received.find((r) => r.path === '/admin/messaging/records/find')?.query,
    ).toEqual({
      traceId,
    })
  })

  it('when a customer has several orders, then the list filtered by the customer; when nothing matches, then nowhere', async () => {
    fleet = await startStubFleet()
    const customerId = randomUUID()
    fleet.stubs.order.behaviour.answers.set('/orders/lookup', {
      status: 200,
      body: {
        matches: [
          { kind: 'customer', orderId: randomUUID() },
          { kind: 'customer', orderId: randomUUID() },
        ],
      },
    })
    for (const stub of Object.values(fleet.stubs))
      if (stub.service !== 'order')
        stub.behaviour.answers.set('/admin/messaging/records/find', {
          status: 200,
          body: { service: stub.service, outbox: [] },
        })
    console_ = await startConsole(fleet.env)
    expect((await search(customerId)).to).toBe(`/orders?customerId=${customerId}`)

    fleet.stubs.order.behaviour.answers.set('/orders/lookup', { status: 200, body: { matches: [] } })
    const none = await search('no-such-key')
    expect(none).toMatchObject({ to: null, matches: [], unanswered: [] })
  })

  it('when q is missing, empty or not printable ASCII, then 400 and no service is asked', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    for (const query of ['', '?q=', '?q=%20', '?q=%C3%A9']) {
      const response = await fetch(`${console_.url}/api/search${query}`)
      expect(response.status, query).toBe(400)
    }
    expect(fleet.stubs.order.count('/orders/lookup')).toBe(0)
  })
})
