import net from 'node:net'
import { useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { countIds, message, publishedAll, relayFixture } from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

describe('relay: graceful stop', () => {
  const f = useFixture(() => relayFixture('relay_stop'))

  it('when stopped with a batch in flight, then the batch finishes, nothing is half-marked and every connection it opened is closed', async () => {
    const proxy = await brokerProxy()
    try {
      // A publish timeout far longer than a loaded machine's confirm round: the batch must be finished.
      const relay = await f.publishingRelay({ batchSize: 20, publishTimeoutMs: 60_000 }, proxy)
      const listeners = async (): Promise<number> =>
        (
          await f.db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
          )
        ).rowCount ?? 0
      await f.until(async () => (await listeners()) === 1, 30_000, 'the LISTEN connection')
      // Slow the link so the stop lands while confirms are on their way.
      proxy.latencyMs = 200
      const before = f.tap.messages.length
      const ids = await f.commit(Array.from({ length: 20 }, (_, n) => message(n + 1)))
      relay.wake()
      await f.tap.waitForCount(before + 1, 30_000)
      const published: string[] = []
      relay.signals.on('published', (s) => published.push(s.id))
      await relay.stop()
      const { rows } = await f.db.pool.query<{ id: string; published_at: Date | null }>(
        'SELECT id, published_at FROM outbox_message WHERE id = ANY($1::uuid[])',
        [ids],
      )
      // The batch was finished, not abandoned: its rows were marked in one go after the confirms.
      expect(rows.every((r) => r.published_at !== null)).toBe(true)
      expect(new Set(published)).toEqual(new Set(ids))
      await f.tap.waitForCount(before + ids.length, 30_000)
      expect(ids.every((id) => countIds(f.tap.ids()).get(id) === 1)).toBe(true)
      expect(relay.running).toBe(false)
      expect(relay.isConnected).toBe(false)
      // The sockets close a moment after the AMQP close handshake and the pg Terminate message.
      await f.until(() => proxy.openSockets === 0, 30_000, 'the AMQP sockets to close')
      await f.until(async () => (await listeners()) === 0, 30_000, 'the LISTEN connection to close')
    } finally {
      await proxy.close()
    }
  })

  it('when stopped while its connect to the broker hangs, then stop returns without waiting for the connect', async () => {
    // A "broker" that takes the TCP connection and never answers the AMQP handshake, which then
    // hangs for the 10-minute connect timeout: a stop that waited for it would take minutes, not
    // STOP_WITHIN_MS (generous, for a loaded machine).
    const CONNECT_TIMEOUT_MS = 600_000
    const STOP_WITHIN_MS = 30_000
    const sockets = new Set<net.Socket>()
    const mute = net.createServer((socket) => {
      socket.on('error', () => undefined)
      sockets.add(socket)
    })
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = mute.address() as net.AddressInfo
      const relay = f.relay({
        amqpUrl: `amqp://guest:guest@127.0.0.1:${port}`,
        amqp: { connectTimeoutMs: CONNECT_TIMEOUT_MS },
      })
      await relay.start()
      await f.until(() => sockets.size > 0, 30_000, 'the relay to connect to the mute broker')
      const started = performance.now()
      await relay.stop()
      expect(performance.now() - started).toBeLessThan(STOP_WITHIN_MS)
      expect(relay.running).toBe(false)
      expect(relay.isConnected).toBe(false)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => mute.close(resolve))
    }
  })

  it('when a stopped relay is started again, then it publishes what was committed meanwhile, once, on one new connection', async () => {
    const relay = f.relay()
    await relay.start()
    const [first = ''] = await f.commit([message(100)])
    await relay.signals.waitFor('published', (s) => s.id === first, 30_000)
    await relay.stop()
    expect(relay.running).toBe(false)
    const ids = await f.commit([message(101), message(102)])
    const allPublished = publishedAll(relay, ids)
    await relay.start()
    expect(relay.running).toBe(true)
    await allPublished
    expect(relay.isConnected).toBe(true)
    await f.tapped(ids)
    const counts = countIds(f.tap.ids())
    expect([first, ...ids].map((id) => counts.get(id))).toEqual([1, 1, 1])
    // The LISTEN connection comes up in the background (the start's first poll needs none), so wait
    // for it; then there must be exactly one, not the old one beside a new one.
    const listeners = async (): Promise<number> =>
      (
        await f.db.pool.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'",
        )
      ).rowCount ?? 0
    let seen = 0
    await f.until(async () => (seen = await listeners()) > 0, 30_000, 'the LISTEN connection')
    expect(seen).toBe(1)
    await relay.stop()
  })
})
