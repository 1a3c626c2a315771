import { useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { AMQP_URL } from '@saga/testkit'
import { pgDatabase } from '../src/database.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { countIds, message, pendingCount, publishedAll, relayFixture } from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

describe('relay: publishing', () => {
  const f = useFixture(() => relayFixture('relay'))

  it('when 4 relays drain 2,000 rows at once, then the tap gets every id exactly once and every row ends published', async () => {
    const relays = [1, 2, 3, 4].map(() => f.relay({ batchSize: 50 }))
    const published = new Map<number, number>()
    relays.forEach((relay, index) =>
      relay.signals.on('published', () => published.set(index, (published.get(index) ?? 0) + 1)),
    )
    await Promise.all(relays.map((relay) => relay.start()))
    // All connected before the backlog comes, then all woken at once: on a loaded machine the first
    // relay to connect could otherwise drain it alone before the others are up.
    await f.until(() => relays.every((relay) => relay.isConnected), 30_000, 'every relay to connect')
    await f.backlog(2_000)
    for (const relay of relays) relay.wake()
    await f.tap.waitForCount(2_000, 60_000)
    await f.until(async () => (await pendingCount(f.db.pool)) === 0, 30_000, 'no pending rows')
    await Promise.all(relays.map((relay) => relay.stop()))
    const counts = countIds(f.tap.ids())
    const { rows } = await f.db.pool.query<{ id: string }>(
      'SELECT id FROM outbox_message WHERE published_at IS NOT NULL',
    )
    expect(f.tap.messages).toHaveLength(2_000)
    expect(counts.size).toBe(2_000)
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(counts.keys()))
    // Every relay did part of the work (SKIP LOCKED shares the backlog instead of serialising it).
    expect([...published.values()].reduce((a, b) => a + b, 0)).toBe(2_000)
    expect(published.size).toBeGreaterThan(1)
  })

  it('when the confirm is still on its way back, then the row is not yet published', async () => {
    // The tap reads the broker directly; the relay talks to it through a proxy that delays every
    // byte by 5 s. So the broker has routed the message 5 s before the relay hears the confirm: time
    // enough to read the row on a loaded machine.
    const proxy = await brokerProxy()
    try {
      const relay = await f.publishingRelay({ publishTimeoutMs: 60_000 }, proxy)
      proxy.latencyMs = 5_000
      const before = f.tap.messages.length
      const [id] = await f.commit([message(2)])
      relay.wake()
      await f.tap.waitForCount(before + 1, 30_000)
      const atArrival = await f.row(id!)
      await relay.signals.waitFor('published', (s) => s.id === id, 30_000)
      expect(atArrival.published_at).toBeNull()
      expect((await f.row(id!)).published_at).toBeInstanceOf(Date)
      await relay.stop()
    } finally {
      await proxy.close()
    }
  })

  it('when confirms are awaited per batch, then 200 rows over a 500 ms link publish in a few round trips, not 200', async () => {
    // One confirm awaited per message would need at least 200 round trips of 500 ms: 100 s. Per batch
    // it takes a few; MOST_ROUND_TRIPS leaves room for a loaded machine and stays far from 200.
    const ROUND_TRIP_MS = 500
    const MOST_ROUND_TRIPS = 80
    const proxy = await brokerProxy()
    try {
      const relay = await f.publishingRelay({ batchSize: 100, publishTimeoutMs: 60_000 }, proxy)
      proxy.latencyMs = ROUND_TRIP_MS / 2
      const ids = await f.commit(Array.from({ length: 200 }, (_, n) => message(n)))
      const started = performance.now()
      relay.wake()
      await publishedAll(relay, ids)
      const roundTrips = (performance.now() - started) / ROUND_TRIP_MS
      expect(roundTrips).toBeLessThan(MOST_ROUND_TRIPS)
      await relay.stop()
    } finally {
      await proxy.close()
    }
  }, 120_000)

  it('when a row commits after later rows were published, then it is still published', async () => {
    const relay = f.relay()
    await relay.start()
    const database = pgDatabase(f.db.pool)
    let releaseEarly: () => void = () => undefined
    const held = new Promise<void>((resolve) => (releaseEarly = resolve))
    let earlyId = ''
    let enqueued: () => void = () => undefined
    const inserted = new Promise<void>((resolve) => (enqueued = resolve))
    const early = database.transaction(async (tx) => {
      earlyId = await enqueue(tx, message(1))
      enqueued()
      await held
    })
    await inserted
    const [later] = await f.commit([message(2)])
    relay.wake()
    await relay.signals.waitFor('published', (s) => s.id === later, 30_000)
    expect(earlyId < later!).toBe(true)
    releaseEarly()
    await early
    relay.wake()
    await relay.signals.waitFor('published', (s) => s.id === earlyId, 30_000)
    expect((await f.row(earlyId)).published_at).toBeInstanceOf(Date)
    await relay.stop()
  })
})

describe('relay: unroutable and poison rows', () => {
  const f = useFixture(() => relayFixture('relay_poison'))

  it('when no queue takes a message, then it is returned, not marked published, retried with a growing backoff past maxAttempts without being parked, and published once a queue is bound', async () => {
    // The fixture's tap takes every key; a second exchange with a tap on one key only leaves the rest unroutable.
    const narrowExchange = `${f.exchange}_narrow`
    const relay = f.relay({ maxAttempts: 3, exchange: narrowExchange, backoffBaseMs: 50, backoffMaxMs: 200 })
    const { tapQueue, deleteBrokerObjects } = await import('@saga/testkit')
    const narrow = await tapQueue(AMQP_URL, narrowExchange, ['routed.*'])
    let late: Awaited<ReturnType<typeof tapQueue>> | undefined
    try {
      await relay.start()
      const failures: number[] = []
      const parked: string[] = []
      relay.signals.on('parked', (s) => parked.push(s.id))
      let unroutable = ''
      relay.signals.on('publishFailed', (s) => s.id === unroutable && failures.push(s.attempts))
      const [routed, id] = await f.commit([message(1, 'routed.here'), message(2, 'nobody.home')])
      unroutable = id!
      relay.wake()
      // Past maxAttempts (3): a topology gap is no reason to give a row up.
      await f.until(() => failures.length >= 5, 30_000, 'five failed attempts')
      const row = await f.row(unroutable)
      expect(failures.slice(0, 5)).toEqual([1, 2, 3, 4, 5])
      expect(row).toMatchObject({ published_at: null, failed_at: null })
      expect(row.last_error).toMatch(/312 NO_ROUTE/)
      expect(parked).toEqual([])
      expect((await f.row(routed!)).published_at).toBeInstanceOf(Date)
      expect(narrow.ids()).toEqual([routed])

      // The queue comes (back): the row goes out by itself within its capped backoff.
      const published = relay.signals.waitFor('published', (s) => s.id === unroutable, 30_000)
      late = await tapQueue(AMQP_URL, narrowExchange, ['nobody.*'])
      await published
      await late.waitForCount(1, 30_000)
      expect(late.ids()).toEqual([unroutable])
      expect((await f.row(unroutable)).published_at).toBeInstanceOf(Date)
      expect(relay.stats()).toMatchObject({ parkedTotal: 0 })
      expect(f.logger.entries.some((e) => e.msg === 'outbox row parked')).toBe(false)
    } finally {
      await relay.stop()
      await narrow.delete()
      await late?.delete()
      await deleteBrokerObjects({ exchanges: [narrowExchange] })
    }
  })

  it('when a row can never be published, then it backs off and is parked while the rows behind it flow', async () => {
    const relay = f.relay({ maxAttempts: 4, batchSize: 10, backoffBaseMs: 300, backoffMaxMs: 1_000 })
    await relay.start()
    let poison = ''
    const firstFailure = relay.signals.waitFor('publishFailed', (s) => s.id === poison, 30_000)
    const parking = relay.signals.waitFor('parked', (s) => s.id === poison, 30_000)
    const good = await pgDatabase(f.db.pool).transaction(async (tx) => {
      // A header over amqplib's 64 KiB encoding limit: publish() throws for this message only.
      poison = await enqueue(tx, { ...message(0), traceparent: 'x'.repeat(70_000) })
      return Promise.all(Array.from({ length: 30 }, (_, n) => enqueue(tx, message(n + 1))))
    })
    relay.wake()
    const first = await firstFailure
    const { rows: backedOff } = await f.db.pool.query<{ later: boolean }>(
      // Later than it was written (available_at defaults to the INSERT's now(), as occurred_at does):
      // compared with the clock instead, a backoff of 150-300 ms could pass before this query ran.
      'SELECT available_at > occurred_at AS later FROM outbox_message WHERE id = $1',
      [poison],
    )
    const afterFirst = await f.row(poison)
    await f.until(
      async () => {
        const { rows } = await f.db.pool.query(
          'SELECT 1 FROM outbox_message WHERE id = ANY($1::uuid[]) AND published_at IS NOT NULL',
          [good],
        )
        return rows.length === good.length
      },
      30_000,
      'the good rows published',
    )
    const parked = await parking
    const row = await f.row(poison)
    expect(first.attempts).toBe(1)
    expect(backedOff[0]?.later).toBe(true)
    expect(afterFirst.last_error).toMatch(/publish failed/)
    expect(parked.attempts).toBe(4)
    expect(row).toMatchObject({ attempts: 4, published_at: null })
    expect(row.failed_at).toBeInstanceOf(Date)
    expect(row.last_error).toMatch(/^publish failed: /)
    const stats = await relay.refreshStats()
    expect(stats.parked).toBeGreaterThanOrEqual(1)
    expect(stats.pending).toBe(0)
    await relay.stop()
  })
})
