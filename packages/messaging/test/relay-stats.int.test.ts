import { useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { message, pendingCount, publishedAll, relayFixture } from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

// Figures must follow the outbox by the default refresh (a read every second, and one soon after the
// publish loop drains a backlog): with a 5 s refresh, metrics would show 0 pending while 5 rows
// waited, and readiness would stay 503 for ~4 s after the backlog drained. The test asserts what the
// figures show, not how many milliseconds a loaded machine took to show it.
describe('relay: how fresh the outbox figures are', () => {
  const f = useFixture(() => relayFixture('relay_stats'))
  const proxy = useFixture(brokerProxy, (link) => link.close())

  it('when rows wait behind a cut broker link and then drain, then pending and the oldest age follow, with the default refresh', async () => {
    // Defaults for the figures: no statsIntervalMs override.
    const relay = await f.publishingRelay({ amqp: { connectTimeoutMs: 500 } }, proxy)
    proxy.cut()
    await f.until(() => !relay.isConnected, 5_000, 'the relay to notice the cut')
    const beforeCommit = performance.now()
    const ids = await f.commit(Array.from({ length: 5 }, (_, n) => message(n + 1)))
    const committedAt = performance.now()
    await f.until(() => relay.stats().pending === 5, 10_000, 'the stats to show 5 pending')
    expect(await pendingCount(f.db.pool)).toBe(5)

    // The oldest age keeps growing between reads, in step with the time waited: at least the time
    // since the commit, at most the time since the transaction began (plus the clock's rounding).
    await f.until(() => performance.now() - committedAt > 2_000, 10_000, 'two seconds')
    const askedAt = performance.now()
    const age = relay.stats().oldestPendingAgeMs
    const answeredAt = performance.now()
    expect(age).toBeGreaterThanOrEqual(askedAt - committedAt - 100)
    expect(age).toBeLessThanOrEqual(answeredAt - beforeCommit + 100)

    const drained = publishedAll(relay, ids)
    proxy.restore()
    await drained
    await f.until(
      () => relay.stats().pending === 0 && relay.stats().oldestPendingAgeMs === 0,
      10_000,
      'the stats to show the drained outbox',
    )
    await relay.stop()
  })
})
