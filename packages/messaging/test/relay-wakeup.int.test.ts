import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import type { Relay } from '../src/outbox/relay.js'
import { createCrossInstanceWakeup, type CrossInstanceWakeup } from '../src/outbox/wakeup.js'
import { message, relayFixture, type RelayFixture } from './relay-fixture.js'

// Long enough that a publish within it can only come from a wake-up, not from the poll.
const POLL_MS = 5_000

describe('relay: wake-up', () => {
  const f = useFixture(() => relayFixture('relay_wake'))

  const listenerPids = async (): Promise<number[]> => {
    const { rows } = await f.db.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    return rows.map((r) => r.pid)
  }

  const commitToPublish = async (
    wake: () => void,
    relay: { signals: ReturnType<RelayFixture['relay']>['signals'] },
  ): Promise<number> => {
    let id = ''
    const published = relay.signals.waitFor('published', (s) => s.id === id, POLL_MS - 500)
    const started = performance.now()
    ;[id] = (await f.commit([message(1)])) as [string]
    wake()
    await published
    return performance.now() - started
  }

  /**
   * Runs `body` with a started relay that polls every POLL_MS and listens for NOTIFY (its LISTEN
   * connection open), and another instance's wake-up; closes the wake-up and stops the relay after.
   */
  const withListeningRelay = async (body: (relay: Relay, other: CrossInstanceWakeup) => Promise<void>) => {
    const relay = f.relay({ pollIntervalMs: POLL_MS })
    await relay.start()
    const other = createCrossInstanceWakeup({ pool: f.db.pool })
    try {
      await f.until(
        async () => relay.isConnected && (await listenerPids()).length === 1,
        5_000,
        'the relay to listen',
      )
      await body(relay, other)
    } finally {
      await other.close()
      await relay.stop()
    }
  }

  it('when the committing instance wakes its relay, then the row is published far sooner than the poll interval', async () => {
    const relay = f.relay({ pollIntervalMs: POLL_MS, wakeup: { listen: false } })
    await relay.start()
    await f.until(() => relay.isConnected, 5_000, 'the relay to connect')
    const latencies: number[] = []
    for (let i = 0; i < 5; i += 1) latencies.push(await commitToPublish(() => relay.wake(), relay))
    expect(Math.max(...latencies)).toBeLessThan(POLL_MS / 5)
    await relay.stop()
  })

  it('when another instance commits, then this relay is woken through NOTIFY and publishes far sooner than the poll interval', async () => {
    await withListeningRelay(async (relay, other) => {
      const latencies: number[] = []
      for (let i = 0; i < 5; i += 1) latencies.push(await commitToPublish(() => other.notify(), relay))
      expect(Math.max(...latencies)).toBeLessThan(POLL_MS / 5)
    })
  })

  it('when the LISTEN connection is killed, then the relay listens again and a row committed meanwhile is not lost', async () => {
    await withListeningRelay(async (relay, other) => {
      const [killed] = await listenerPids()
      await f.db.pool.query('SELECT pg_terminate_backend($1)', [killed])
      // Committed and notified while nobody listens: the NOTIFY is lost, the reconnect's wake is not.
      const [gap] = await f.commit([message(1)])
      const started = performance.now()
      other.notify()
      await relay.signals.waitFor('published', (s) => s.id === gap, POLL_MS - 500)
      expect(performance.now() - started).toBeLessThan(POLL_MS / 2)
      await f.until(
        async () => {
          const pids = await listenerPids()
          return pids.length === 1 && pids[0] !== killed
        },
        5_000,
        'a new LISTEN connection',
      )
      expect(f.logger.entries.some((e) => e.msg === 'outbox LISTEN connection lost; reconnecting')).toBe(true)
      const latency = await commitToPublish(() => other.notify(), relay)
      expect(latency).toBeLessThan(POLL_MS / 5)
    })
  })

  it('when many commits notify at once, then at most a few NOTIFYs are sent', async () => {
    const sent: string[] = []
    const spy = f.db.pool.query.bind(f.db.pool)
    const counting = createCrossInstanceWakeup({
      pool: new Proxy(f.db.pool, {
        get(target, key, receiver) {
          if (key === 'query') {
            return (text: string, values: unknown[]) => {
              sent.push(text)
              return spy(text, values)
            }
          }
          return Reflect.get(target, key, receiver) as unknown
        },
      }),
      windowMs: 50,
    })
    for (let i = 0; i < 200; i += 1) counting.notify()
    await f.until(() => sent.length >= 2, 2_000, 'the trailing NOTIFY')
    await counting.close()
    // One at once, one trailing for the rest of the window.
    expect(sent).toHaveLength(2)
  })
})
