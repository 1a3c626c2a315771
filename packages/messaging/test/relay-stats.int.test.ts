import { useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { message, pendingCount, publishedAll, relayFixture } from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

// Figures must be at most about a second old: with a 5 s refresh, metrics would show 0 pending while
// 5 rows waited, and readiness would stay 503 for ~4 s after the backlog drained.
describe('relay: how fresh the outbox figures are', () => {
  const f = useFixture(() => relayFixture('relay_stats'))
  const proxy = useFixture(brokerProxy, (link) => link.close())

  it('when rows wait behind a cut broker link and then drain, then pending and the oldest age follow within about a second, with the default refresh', async () => {
    // Defaults for the figures: no statsIntervalMs override.
    const relay = await f.publishingRelay({ amqp: { connectTimeoutMs: 500 } }, proxy)
    proxy.cut()
    await f.until(() => !relay.isConnected, 5_000, 'the relay to notice the cut')
    const ids = await f.commit(Array.from({ length: 5 }, (_, n) => message(n + 1)))
    const committedAt = performance.now()
    await f.until(() => relay.stats().pending === 5, 2_000, 'the stats to show 5 pending')
    expect(performance.now() - committedAt).toBeLessThan(1_500)
    expect(await pendingCount(f.db.pool)).toBe(5)

    // The oldest age keeps growing between reads, in step with the time waited.
    await f.until(() => performance.now() - committedAt > 2_000, 3_000, 'two seconds')
    const age = relay.stats().oldestPendingAgeMs
    expect(age).toBeGreaterThanOrEqual(1_700)
    expect(age).toBeLessThan(performance.now() - committedAt + 500)

    const drained = publishedAll(relay, ids)
    proxy.restore()
    await drained
    const drainedAt = performance.now()
    await f.until(
      () => relay.stats().pending === 0 && relay.stats().oldestPendingAgeMs === 0,
      2_000,
      'the stats to show the drained outbox',
    )
    expect(performance.now() - drainedAt).toBeLessThan(1_000)
    await relay.stop()
  })
})
