import { PRIVATE_RABBITMQ_HOOKS, startPrivateRabbitmq, tapQueue, useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { pgDatabase } from '../src/database.js'
import { createMessaging } from '../src/messaging.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { message, relayFixture } from './relay-fixture.js'

// With the memory alarm raised the broker blocks publishes: they time out, and health must not say `up`.
// The alarm blocks every publishing connection of its node, so this file raises it on a node of
// its own (startPrivateRabbitmq), never on the broker the other tests share.
describe('relay: a connection the broker blocks', () => {
  const f = useFixture(() => relayFixture('relay_blocked'))
  const broker = useFixture(startPrivateRabbitmq, (b) => b.stop(), PRIVATE_RABBITMQ_HOOKS)

  it('when the broker raises its memory alarm, then health and metrics show the blocked connection with its reason, the relay waits without spending attempts, and publishes once unblocked', async () => {
    const messaging = createMessaging({
      service: 'blocked-test',
      database: pgDatabase(f.db.pool),
      pool: f.db.pool,
      amqpUrl: broker.url,
      exchange: f.exchange,
      logger: f.logger,
      // Far longer than the alarm lasts even on a loaded machine (three rabbitmqctl runs): the batch
      // caught by the alarm is confirmed after it, never timed out.
      relay: { publishTimeoutMs: 300_000, retentionIntervalMs: 0 },
    })
    const health = () => messaging.health().areas.find((a) => a.area === 'broker')!
    const failures: string[] = []
    messaging.signals.on('publishFailed', (s) => failures.push(s.error))
    const publishedAt = new Map<string, number>()
    messaging.signals.on('published', (s) => publishedAt.set(s.id, performance.now()))
    // A queue bound to the exchange on this node, so the relay's mandatory publishes are routed.
    const tap = await tapQueue(broker.url, f.exchange)
    await messaging.start()
    const commit = (n: number): Promise<string> => messaging.transaction((tx) => enqueue(tx, message(n)))
    const warm = await commit(0)
    await messaging.signals.waitFor('published', (s) => s.id === warm, 30_000)

    const watermark = /high watermark setting: ([0-9.]+) of available memory/i.exec(
      await broker.ctl('status'),
    )?.[1]
    let id = ''
    let clearingAt: number
    try {
      await broker.ctl('set_vm_memory_high_watermark', '0.0000001')
      // The broker blocks a connection when it next publishes.
      id = await commit(1)
      await f.until(() => health().facts.relayBlocked !== null, 60_000, 'the relay to be blocked')
      expect(health().facts.relayBlocked).toMatch(/memory/)
      expect(messaging.health().ok).toBe(false)
      expect(health().detail).toMatch(/relay connection blocked by the broker \(low on memory\)/)
      expect(messaging.stats().brokerBlocked).toBe(1)
    } finally {
      clearingAt = performance.now()
      await broker.ctl('set_vm_memory_high_watermark', watermark ?? '0.4')
    }
    await f.until(() => publishedAt.has(id), 60_000, 'the row to be published')
    // Held while blocked (no confirm before the alarm was being cleared); out once it cleared, on
    // its first attempt (no failure, no attempt spent: checked below).
    expect(publishedAt.get(id)).toBeGreaterThan(clearingAt)
    await f.until(() => health().facts.relayBlocked === null, 60_000, 'the relay to be unblocked')
    expect(messaging.stats().brokerBlocked).toBe(0)
    expect(failures).toEqual([])
    expect((await f.row(id)).attempts).toBe(0)
    await messaging.stop()
    await tap.delete()
  }, 180_000)
})
