import { afterEach, describe, expect, it } from 'vitest'
import type { FleetSnapshot } from '../src/fleet.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { startStub, startStubFleet, type StubFleet } from './support/stubs.js'

let fleet: StubFleet | undefined
let console_: RunningConsole | undefined

afterEach(async () => {
  await console_?.close()
  await fleet?.close()
  console_ = undefined
  fleet = undefined
})

const getFleet = async (url: string) => (await (await fetch(`${url}/api/fleet`)).json()) as FleetSnapshot

/**
 * Asks `/api/fleet` until `done` holds of its answer (a new poll every interval); the 30 s deadline
 * only ends a wait for a snapshot that never comes.
 */
async function fleetWhen(url: string, done: (snapshot: FleetSnapshot) => boolean): Promise<FleetSnapshot> {
  const deadline = performance.now() + 30_000
  for (;;) {
    const snapshot = await getFleet(url)
    if (done(snapshot)) return snapshot
    if (performance.now() > deadline) throw new Error(`no such snapshot by poll ${snapshot.seq}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const serviceOf = (snapshot: FleetSnapshot, service: string) => {
  const found = snapshot.services.find((s) => s.service === service)
  if (found === undefined) throw new Error(`${service} is not in poll ${snapshot.seq}`)
  return found
}

/**
 * Opens `/api/live` and resolves with the first `count` fleet snapshots, then closes the stream once
 * `leave` (called with them) resolves.
 */
async function readLive(
  url: string,
  count: number,
  leave: () => Promise<void> = () => Promise.resolve(),
): Promise<FleetSnapshot[]> {
  const controller = new AbortController()
  const response = await fetch(`${url}/api/live`, { signal: controller.signal })
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const snapshots: FleetSnapshot[] = []
  let buffer = ''
  while (snapshots.length < count) {
    const { value, done } = await reader.read()
    if (done) break
    buffer += value
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const data = frame.split('\n').find((l) => l.startsWith('data: '))
      if (frame.includes('event: fleet') && data) snapshots.push(JSON.parse(data.slice(6)) as FleetSnapshot)
    }
  }
  await leave()
  controller.abort()
  return snapshots
}

describe('the fleet snapshot', () => {
  it('when every service answers, then /api/fleet has each one up with its messaging summary and the order stats', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole(fleet.env)
    const snapshot = await getFleet(console_.url)
    expect(snapshot.services.map((s) => [s.service, s.health])).toEqual([
      ['order', 'up'],
      ['payment', 'up'],
      ['inventory', 'up'],
      ['shipment', 'up'],
    ])
    expect(snapshot.services[1]?.messaging?.outbox.pending).toBe(2)
    expect(snapshot.orders.stats?.byStatus.CONFIRMED).toBe(90)
    expect(snapshot.orders.recent).toEqual([])
    expect(fleet.stubs.order.received.find((r) => r.path === '/orders')?.query).toEqual({ limit: '20' })
  })

  it('when one service is slow and one is stopped, then both show as down with the reason and the rest answer in time', async () => {
    fleet = await startStubFleet()
    // Payment would answer in ten minutes: the snapshot can only come before that by the upstream
    // timeout, and the timeout (10 s) leaves the other stubs time to answer on a loaded machine.
    fleet.stubs.payment.behaviour.delayMs = 600_000
    await fleet.stubs.shipment.close()
    fleet.stubs.inventory.behaviour.notReady = true
    console_ = await startConsole({ ...fleet.env, CONSOLE_UPSTREAM_TIMEOUT_MS: '10000' })
    const snapshot = await getFleet(console_.url)
    const byName = Object.fromEntries(snapshot.services.map((s) => [s.service, s]))
    expect(byName.order?.health).toBe('up')
    expect(byName.payment).toMatchObject({
      health: 'down',
      reason: 'not live: did not answer within 10000 ms',
    })
    expect(byName.shipment).toMatchObject({ health: 'down', reason: 'not live: unreachable (ECONNREFUSED)' })
    expect(byName.inventory).toMatchObject({
      health: 'degraded',
      reason: 'not ready: database: down (connection refused)',
    })
  })

  it('when the order service is down, then the snapshot says why the orders are missing', async () => {
    fleet = await startStubFleet()
    await fleet.stubs.order.close()
    console_ = await startConsole(fleet.env)
    const snapshot = await getFleet(console_.url)
    expect(snapshot.orders).toMatchObject({ stats: null, recent: null })
    expect(snapshot.orders.error).toContain('order: unreachable')
  })

  /**
   * A stub fleet and a console that polls every 100 ms. A stub stops answering by closing (refused at
   * once), so the upstream timeout is kept generous: a stub that is slow on a loaded machine is not down.
   */
  const startPolledFast = async () => {
    const stubs = await startStubFleet()
    const started = await startConsole({
      ...stubs.env,
      CONSOLE_POLL_MS: '100',
      CONSOLE_UPSTREAM_TIMEOUT_MS: '10000',
    })
    return { fleet: stubs, console_: started }
  }

  it('when a service answered once and then stops answering, then its queues stay, stale, with the time they were read', async () => {
    ;({ fleet, console_ } = await startPolledFast())
    const first = await getFleet(console_.url)
    const live = serviceOf(first, 'payment').queues
    expect(live).toEqual({
      state: 'live',
      readAt: first.at,
      items: [expect.objectContaining({ queue: 'payment.payment-handler', ready: 0, deadLettered: 3 })],
    })
    await fleet.stubs.payment.close()
    const down = await fleetWhen(console_.url, (s) => serviceOf(s, 'payment').health === 'down')
    expect(down.seq).toBeGreaterThan(first.seq)
    expect(serviceOf(down, 'payment')).toMatchObject({
      messaging: null,
      queues: { state: 'stale', readAt: first.at, items: live.items },
    })
    expect(serviceOf(down, 'order').queues).toMatchObject({ state: 'live', readAt: down.at })
  })

  it('when a service that stopped answering answers again, then its queues are live again', async () => {
    ;({ fleet, console_ } = await startPolledFast())
    const first = await getFleet(console_.url)
    const { port } = new URL(fleet.stubs.payment.url)
    await fleet.stubs.payment.close()
    const stale = await fleetWhen(console_.url, (s) => serviceOf(s, 'payment').queues.state === 'stale')
    expect(serviceOf(stale, 'payment').queues.readAt).toBe(first.at)
    fleet.stubs.payment = await startStub('payment', [], Number(port))
    const again = await fleetWhen(console_.url, (s) => serviceOf(s, 'payment').health === 'up')
    expect(serviceOf(again, 'payment').queues).toMatchObject({ state: 'live', readAt: again.at })
  })

  it('when a service has not answered since the console started, then its queues are unknown', async () => {
    fleet = await startStubFleet()
    await fleet.stubs.payment.close()
    console_ = await startConsole(fleet.env)
    const snapshot = await getFleet(console_.url)
    expect(serviceOf(snapshot, 'payment')).toMatchObject({
      health: 'down',
      queues: { state: 'unknown', readAt: null, items: [] },
    })
    expect(serviceOf(snapshot, 'inventory').queues.state).toBe('live')
  })

  it('when two tabs ask within one poll interval, then the services are read once', async () => {
    fleet = await startStubFleet()
    // An interval of ten minutes: the three requests are within it however slow the machine is.
    console_ = await startConsole({ ...fleet.env, CONSOLE_POLL_MS: '600000' })
    await Promise.all([getFleet(console_.url), getFleet(console_.url)])
    await getFleet(console_.url)
    expect(fleet.stubs.payment.count('/admin/messaging/summary')).toBe(1)
  })
})

describe('the live stream', () => {
  /** Summary requests per poll while `tabs` streams each read `polls` snapshots, polled every `pollMs`. */
  async function readsPerPoll(tabs: number, polls: number, pollMs = 100) {
    fleet = await startStubFleet()
    console_ = await startConsole({ ...fleet.env, CONSOLE_POLL_MS: String(pollMs) })
    // Every tab stays until all have their snapshots: the tabs watch together, however their
    // connections are spread on a loaded machine.
    let read = 0
    let release = () => {}
    const allRead = new Promise<void>((resolve) => (release = resolve))
    const leave = () => {
      read += 1
      if (read === tabs) release()
      return allRead
    }
    const streams = await Promise.all(
      Array.from({ length: tabs }, () => readLive(console_!.url, polls, leave)),
    )
    const lastSeq = Math.max(...streams.flatMap((s) => s.map((snapshot) => snapshot.seq)))
    const summaries = fleet.stubs.inventory.count('/admin/messaging/summary')
    const stats = fleet.stubs.order.count('/orders/stats')
    await console_.close()
    console_ = undefined
    await fleet.close()
    fleet = undefined
    return { streams, lastSeq, summaries, stats }
  }

  it('when 1 or 10 tabs watch, then each gets the snapshots and the services see one reader', async () => {
    const one = await readsPerPoll(1, 3)
    const ten = await readsPerPoll(10, 3)
    for (const stream of [...one.streams, ...ten.streams]) expect(stream).toHaveLength(3)
    // One request per poll, whatever the number of tabs (a poll may be in flight as the tabs leave).
    expect(one.summaries).toBeLessThanOrEqual(one.lastSeq + 1)
    expect(ten.summaries).toBeLessThanOrEqual(ten.lastSeq + 1)
    expect(ten.stats).toBeLessThanOrEqual(ten.lastSeq + 1)
    // Ten tabs opened within one interval (ten minutes) get the first tab's poll: one read in all,
    // however the tabs' connections are spread on a loaded machine; a reader per tab would make ten.
    const together = await readsPerPoll(10, 1, 600_000)
    for (const stream of together.streams) expect(stream.map((snapshot) => snapshot.seq)).toEqual([1])
    expect(together.summaries).toBe(1)
    expect(together.stats).toBe(1)
  })

  it('when the console closes with tabs still watching, then their streams end and the close does not wait for them', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole({ ...fleet.env, CONSOLE_POLL_MS: '100' })
    const response = await fetch(`${console_.url}/api/live`)
    const reader = response.body!.getReader()
    await reader.read()
    // The tab never leaves: the close can only finish if the console ends the stream itself (else
    // the server waits for the response in progress, and the test runs into its timeout).
    await console_.close()
    console_ = undefined
    let done = false
    while (!done) done = (await reader.read()).done
    expect(done).toBe(true)
  })

  it('when the last tab leaves, then polling stops', async () => {
    fleet = await startStubFleet()
    console_ = await startConsole({ ...fleet.env, CONSOLE_POLL_MS: '100' })
    await readLive(console_.url, 2)
    // The console has seen the tab leave once its connection is gone (the stream's close unsubscribes).
    await expect.poll(() => console_!.connections(), { timeout: 30_000 }).toBe(0)
    // "Stops" is an absence, watched over windows counted in the polls of a control: a second console
    // with the same interval and stubs of its own, watched by a tab. Its polls slow down with the
    // machine as the first console's would. The first window (five control polls) lets a poll that
    // was already in flight land; in the next, a poller still running would have polled about as
    // often as the control did.
    const controlFleet = await startStubFleet()
    const control = await startConsole({ ...controlFleet.env, CONSOLE_POLL_MS: '100' })
    try {
      const window = () => readLive(control.url, 5)
      await window()
      const after = fleet.stubs.order.count('/health/live')
      await window()
      expect(fleet.stubs.order.count('/health/live')).toBe(after)
    } finally {
      await control.close()
      await controlFleet.close()
    }
  })
})
