import { describe, expect, it } from 'vitest'
import { useFixture } from '@saga/testkit'
import type { Relay } from '../src/outbox/relay.js'
import { createCrossInstanceWakeup, type CrossInstanceWakeup } from '../src/outbox/wakeup.js'
import { message, relayFixture, type RelayFixture } from './relay-fixture.js'

// The relays here poll once in 10 minutes, far longer than a test runs: a row published within
// WAKE_WITHIN_MS of its commit (generous, for a loaded machine) can only have been woken, never polled.
const POLL_MS = 600_000
const WAKE_WITHIN_MS = 30_000

describe('relay: wake-up', () => {
  const f = useFixture(() => relayFixture('relay_wake'))

  const listenerPids = async (): Promise<number[]> => {
    const { rows } = await f.db.pool.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
    )
    return rows.map((r) => r.pid)
  }

  /** Commits a row, calls `wake`, and waits until the relay published it; rejects after WAKE_WITHIN_MS. */
  const commitAndWake = async (
    wake: () => void,
    relay: { signals: ReturnType<RelayFixture['relay']>['signals'] },
  ): Promise<void> => {
    let id = ''
    const published = relay.signals.waitFor('published', (s) => s.id === id, WAKE_WITHIN_MS)
    ;[id] = (await f.commit([message(1)])) as [string]
    wake()
    await published
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
        30_000,
        'the relay to listen',
      )
      await body(relay, other)
    } finally {
      await other.close()
      await relay.stop()
    }
  }

  it('when the committing instance wakes its relay, then the row is published without waiting for the poll', async () => {
    const relay = f.relay({ pollIntervalMs: POLL_MS, wakeup: { listen: false } })
    await relay.start()
    await f.until(() => relay.isConnected, 30_000, 'the relay to connect')
    for (let i = 0; i < 5; i += 1) await commitAndWake(() => relay.wake(), relay)
    await relay.stop()
  })

  it('when another instance commits, then this relay is woken through NOTIFY and publishes without waiting for the poll', async () => {
    await withListeningRelay(async (relay, other) => {
      for (let i = 0; i < 5; i += 1) await commitAndWake(() => other.notify(), relay)
    })
  })

  it('when the LISTEN connection is killed, then the relay listens again and a row whose NOTIFY it missed is not lost', async () => {
    await withListeningRelay(async (relay, other) => {
      const [killed] = await listenerPids()
      // Committed without any wake-up or NOTIFY, as if its NOTIFY came while nobody listened: only
      // the wake the relay raises when it listens again (or the 10-minute poll) makes it look.
      const [gap] = await f.commit([message(1)])
      const published = relay.signals.waitFor('published', (s) => s.id === gap, WAKE_WITHIN_MS)
      await f.db.pool.query('SELECT pg_terminate_backend($1)', [killed])
      await published
      await f.until(
        async () => {
          const pids = await listenerPids()
          return pids.length === 1 && pids[0] !== killed
        },
        30_000,
        'a new LISTEN connection',
      )
      expect(f.logger.entries.some((e) => e.msg === 'outbox LISTEN connection lost; reconnecting')).toBe(true)
      // The new connection takes NOTIFYs.
      await commitAndWake(() => other.notify(), relay)
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
    await f.until(() => sent.length >= 2, 30_000, 'the trailing NOTIFY')
    await counting.close()
    // One at once, one trailing for the rest of the window.
    expect(sent).toHaveLength(2)
  })
})
