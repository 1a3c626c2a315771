import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { AMQP_URL, useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { pgDatabase } from '../src/database.js'
import { createMessaging } from '../src/messaging.js'
import { enqueue } from '../src/outbox/enqueue.js'
import { message, relayFixture } from './relay-fixture.js'

const run = promisify(execFile)

/**
 * The broker's memory high watermark before the test, restored in `finally`. The alarm blocks
 * every publishing connection on this shared broker, so the window is kept to a few seconds.
 */
async function currentWatermark(): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['status'])
  return /high watermark setting: ([0-9.]+) of available memory/i.exec(stdout)?.[1] ?? '0.4'
}

// With the memory alarm raised the broker blocks publishes: they time out, and health must not say `up`.
describe('relay: a connection the broker blocks', () => {
  const f = useFixture(() => relayFixture('relay_blocked'))

  it('when the broker raises its memory alarm, then health and metrics show the blocked connection with its reason, the relay waits without spending attempts, and publishes once unblocked', async () => {
    const messaging = createMessaging({
      service: 'blocked-test',
      database: pgDatabase(f.db.pool),
      pool: f.db.pool,
      amqpUrl: AMQP_URL,
      exchange: f.exchange,
      logger: f.logger,
      // Long enough that the batch caught by the alarm is confirmed after it, not timed out.
      relay: { publishTimeoutMs: 15_000, retentionIntervalMs: 0 },
    })
    const broker = () => messaging.health().areas.find((a) => a.area === 'broker')!
    const failures: string[] = []
    messaging.signals.on('publishFailed', (s) => failures.push(s.error))
    const publishedAt = new Map<string, number>()
    messaging.signals.on('published', (s) => publishedAt.set(s.id, performance.now()))
    await messaging.start()
    const commit = (n: number): Promise<string> => messaging.transaction((tx) => enqueue(tx, message(n)))
    const warm = await commit(0)
    await messaging.signals.waitFor('published', (s) => s.id === warm, 5_000)

    const watermark = await currentWatermark()
    let id = ''
    let clearingAt: number
    try {
      await run('rabbitmqctl', ['set_vm_memory_high_watermark', '0.0000001'])
      // The broker blocks a connection when it next publishes.
      id = await commit(1)
      await f.until(() => broker().facts.relayBlocked !== null, 10_000, 'the relay to be blocked')
      expect(broker().facts.relayBlocked).toMatch(/memory/)
      expect(messaging.health().ok).toBe(false)
      expect(broker().detail).toMatch(/relay connection blocked by the broker \(low on memory\)/)
      expect(messaging.stats().brokerBlocked).toBe(1)
    } finally {
      clearingAt = performance.now()
      await run('rabbitmqctl', ['set_vm_memory_high_watermark', watermark])
    }
    await f.until(() => publishedAt.has(id), 10_000, 'the row to be published')
    // Held while blocked; out once the alarm cleared (rabbitmqctl itself takes a second or two).
    expect(publishedAt.get(id)).toBeGreaterThan(clearingAt)
    expect((publishedAt.get(id) ?? 0) - clearingAt).toBeLessThan(5_000)
    await f.until(() => broker().facts.relayBlocked === null, 5_000, 'the relay to be unblocked')
    expect(messaging.stats().brokerBlocked).toBe(0)
    expect(failures).toEqual([])
    expect((await f.row(id)).attempts).toBe(0)
    await messaging.stop()
  })
})
