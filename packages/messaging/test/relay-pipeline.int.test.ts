import { useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { countIds, message, publishedAll, relayFixture } from './relay-fixture.js'
import { brokerProxy } from './broker-proxy.js'

describe('relay: pipelined batches', () => {
  const f = useFixture(() => relayFixture('relay_pipe'))

  it('when a backlog spans two batches and confirms are slow, then the second batch reaches the broker before the first is marked, and every row is marked once, after its confirm', async () => {
    // The relay talks to the broker through a proxy that delays every byte by 500 ms; the tap reads
    // the broker directly. One batch at a time, the second batch could only leave after the first
    // batch's confirms came back and its rows were marked; pipelined, both batches reach the broker
    // while every confirm is still on its way back.
    const proxy = await brokerProxy()
    try {
      const relay = await f.publishingRelay({ batchSize: 10, publishTimeoutMs: 10_000 }, proxy)
      proxy.latencyMs = 500
      const before = f.tap.messages.length
      const ids = await f.commit(Array.from({ length: 20 }, (_, n) => message(n + 1)))
      const allPublished = publishedAll(relay, ids)
      relay.wake()
      await f.tap.waitForCount(before + 20, 10_000)
      const { rows: markedAtArrival } = await f.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM outbox_message WHERE id = ANY($1::uuid[]) AND published_at IS NOT NULL',
        [ids],
      )
      await allPublished
      await relay.stop()

      expect(markedAtArrival[0]!.n).toBe(0)
      const counts = countIds(f.tap.ids())
      expect(ids.every((id) => counts.get(id) === 1)).toBe(true)
      const { rows } = await f.db.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM outbox_message WHERE id = ANY($1::uuid[]) AND published_at IS NOT NULL',
        [ids],
      )
      expect(rows[0]!.n).toBe(20)
    } finally {
      await proxy.close()
    }
  })
})
