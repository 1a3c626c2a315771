import amqp from 'amqplib'
import pg from 'pg'
import { AMQP_URL, TcpProxy } from '@saga/testkit'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  countIds,
  message,
  pendingCount,
  publishedAll,
  relayFixture,
  type RelayFixture,
} from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

// The relays here poll once in 10 minutes, far longer than a test runs, so a row published within
// RECOVER_WITHIN_MS of a link's return (generous, for a loaded machine) was published because the
// relay resumed by itself (reconnect, retry with backoff), never by a poll.
const POLL_MS = 600_000
const RECOVER_WITHIN_MS = 30_000

describe('relay: broker faults', () => {
  let f: RelayFixture
  let proxy: TcpProxy
  const unhandled: unknown[] = []
  const onUnhandled = (error: unknown): void => void unhandled.push(error)
  beforeAll(async () => {
    f = await relayFixture('relay_faults')
    process.on('unhandledRejection', onUnhandled)
    process.on('uncaughtException', onUnhandled)
  })
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled)
    process.off('uncaughtException', onUnhandled)
    await f.cleanup()
  })
  beforeEach(async () => {
    proxy = await brokerProxy()
  })
  afterEach(async () => {
    await proxy.close()
    expect(unhandled).toEqual([])
  })

  it('when the link to the broker is cut, then rows stay pending and are all published once when it returns, without waiting for the poll', async () => {
    const relay = await f.publishingRelay(
      { pollIntervalMs: POLL_MS, amqp: { connectTimeoutMs: 1_000 } },
      proxy,
    )
    proxy.cut()
    await f.until(() => !relay.isConnected, 30_000, 'the relay to notice the cut')
    const ids = await f.commit(Array.from({ length: 50 }, (_, n) => message(n + 1)))
    relay.wake()
    // Reconnect attempts fail while the link is down; the rows wait.
    await f.until(
      () =>
        f.logger.entries.some(
          (e) => e.msg === 'amqp connect failed; retrying' || e.msg === 'amqp connection lost',
        ),
      30_000,
      'a failed reconnect',
    )
    expect(await pendingCount(f.db.pool)).toBe(50)
    expect(relay.running).toBe(true)
    const allPublished = publishedAll(relay, ids)
    const restoredAt = performance.now()
    proxy.restore()
    await allPublished
    const recoveryMs = performance.now() - restoredAt
    await f.tap.waitForCount(51, 30_000)
    const counts = countIds(f.tap.ids())
    expect(recoveryMs).toBeLessThan(RECOVER_WITHIN_MS)
    expect(ids.every((id) => counts.get(id) === 1)).toBe(true)
    await relay.stop()
  })

  it('when the broker goes silent, then the batch times out, rows stay pending, and the relay recovers after the link returns', async () => {
    const relay = await f.publishingRelay(
      { publishTimeoutMs: 800, amqp: { connectTimeoutMs: 800, heartbeatS: 2 } },
      proxy,
    )
    proxy.silence()
    let ids: string[] = []
    const timedOut = relay.signals.waitFor('publishFailed', (s) => ids.includes(s.id), 30_000)
    ids = await f.commit(Array.from({ length: 5 }, (_, n) => message(n + 1)))
    relay.wake()
    const failure = await timedOut
    expect(failure.error).toMatch(/timed out/)
    const rows = await f.db.pool.query<{ published_at: Date | null; attempts: number; last_error: string }>(
      'SELECT published_at, attempts, last_error FROM outbox_message WHERE id = ANY($1::uuid[])',
      [ids],
    )
    // A timeout is the link's fault, not the row's: recorded in last_error, no attempt spent.
    expect(
      rows.rows.every((r) => r.published_at === null && r.attempts === 0 && /timed out/.test(r.last_error)),
    ).toBe(true)
    const allPublished = publishedAll(relay, ids)
    proxy.restore()
    await allPublished
    await f.tapped(ids)
    const counts = countIds(f.tap.ids())
    // At least once: a message may have reached the broker before the link went silent.
    expect(ids.every((id) => (counts.get(id) ?? 0) >= 1)).toBe(true)
    expect(await pendingCount(f.db.pool)).toBe(0)
    await relay.stop()
  })

  it('when the link to the database is cut for many failed rounds, then the relay keeps running and publishes when it returns, without waiting for the poll', async () => {
    const dbProxy = await TcpProxy.start('127.0.0.1', Number(new URL(f.db.url).port || 5432))
    const pool = new pg.Pool({
      connectionString: dbProxy.url(f.db.url),
      max: 4,
      connectionTimeoutMillis: 1_000,
    })
    try {
      const relay = await f.publishingRelay({ pool, pollIntervalMs: POLL_MS })
      dbProxy.cut()
      // Looks at once (it would not poll for 10 minutes), then retries by itself.
      relay.wake()
      // Enough failed rounds that a retry backoff without its 1 s cap (100 ms doubling) would be
      // 100 ms × 2^10 (at least 51 s with jitter), past RECOVER_WITHIN_MS.
      const failedRounds = (): number =>
        f.logger.entries.filter((e) => e.msg === 'outbox relay database round failed; retrying').length
      await f.until(() => failedRounds() >= 11, 60_000, 'eleven failed rounds')
      // Written by the service's own (healthy) connection while the relay's link is down.
      const ids = await f.commit(Array.from({ length: 10 }, (_, n) => message(n + 1)))
      expect(relay.running).toBe(true)
      const allPublished = publishedAll(relay, ids)
      const restoredAt = performance.now()
      dbProxy.restore()
      await allPublished
      expect(performance.now() - restoredAt).toBeLessThan(RECOVER_WITHIN_MS)
      await relay.stop()
    } finally {
      await pool.end().catch(() => undefined)
      await dbProxy.close()
    }
  }, 120_000)

  it('when the exchange disappears, then the 404 closes the channel and the relay reopens it, redeclares the exchange and goes on', async () => {
    const relay = await f.publishingRelay({ maxAttempts: 50 })
    const admin = await amqp.connect(AMQP_URL)
    admin.on('error', () => undefined)
    const channel = await admin.createChannel()
    // A failed checkExchange closes the channel it ran on (404): each check gets its own.
    const exchangeExists = async (): Promise<boolean> => {
      const probe = await admin.createChannel()
      probe.on('error', () => undefined)
      try {
        await probe.checkExchange(f.exchange)
        await probe.close()
        return true
      } catch {
        return false
      }
    }
    try {
      await channel.deleteExchange(f.exchange)
      let id = ''
      const notFound = relay.signals.waitFor(
        'publishFailed',
        (s) => s.id === id && /404|NOT_FOUND/.test(s.error),
        30_000,
      )
      ;[id] = (await f.commit([message(1)])) as [string]
      relay.wake()
      await notFound
      // The relay declared the exchange again; the tap's binding went with the old one.
      await f.until(exchangeExists, 30_000, 'the exchange to be redeclared')
      await f.tap.bind()
      await relay.signals.waitFor('published', (s) => s.id === id, 30_000)
      const [after] = await f.commit([message(2)])
      relay.wake()
      await relay.signals.waitFor('published', (s) => s.id === after, 30_000)
      await f.tapped([after!])
      expect(relay.running).toBe(true)
      expect(countIds(f.tap.ids()).get(after!)).toBe(1)
    } finally {
      await admin.close()
      await relay.stop()
    }
  })
})
