import { randomBytes, randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { SearchAnswer } from '../src/search.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { startStubFleet, type StubFleet } from './support/stubs.js'

// The console's part of a search: which service it asks for what, and where it lands. The services'
// parts (the look-ups on their databases) are tested in the order service and in messaging-admin, and
// the whole in a browser against the fleet (e2e/test/console-search.e2e.test.ts).
let fleet: StubFleet | undefined
let console_: RunningConsole | undefined

afterEach(async () => {
  await console_?.close()
  await fleet?.close()
  console_ = undefined
  fleet = undefined
})

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
