import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import amqp from 'amqplib'
import { AMQP_URL, uniqueName } from '@saga/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { message, pendingCount, relayFixture, type RelayFixture } from './relay-fixture.js'

const run = promisify(execFile)
const rabbitmqctl = (...args: string[]): Promise<unknown> => run('rabbitmqctl', args, { timeout: 30_000 })

// A quorum queue over a `reject-publish` length limit makes the broker nack, and RabbitMQ 3.10 keeps
// nacking the same channel after the limit is lifted (a fresh one is acked).
describe('relay: a queue that rejects publishes', () => {
  let f: RelayFixture
  const queue = uniqueName('relay_rejected_q')
  const policy = uniqueName('relay_rejected_cap')
  let admin: amqp.ChannelModel
  beforeAll(async () => {
    f = await relayFixture('relay_rejected')
    admin = await amqp.connect(AMQP_URL)
    const channel = await admin.createChannel()
    await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': 'quorum' } })
    await channel.bindQueue(queue, f.exchange, 'capped.happened')
    await channel.close()
  })
  afterAll(async () => {
    await rabbitmqctl('clear_policy', policy).catch(() => undefined)
    const channel = await admin.createChannel()
    await channel.deleteQueue(queue)
    await admin.close()
    await f.cleanup()
  })

  it('when the broker nacks rows until a queue limit is lifted, then no attempt is spent, nothing is parked, no row is put off by more than 5 s, and every row goes out on a fresh channel', async () => {
    await rabbitmqctl(
      'set_policy',
      '--apply-to',
      'queues',
      policy,
      `^${queue}$`,
      '{"max-length":3,"overflow":"reject-publish"}',
    )
    // maxAttempts 2: a nack must not count as an attempt, or the second one would park a row.
    const relay = f.relay({ maxAttempts: 2 })
    const rejected = new Set<string>()
    const settled = new Set<string>()
    relay.signals.on('publishFailed', (s) => {
      settled.add(s.id)
      if (/nack/.test(s.error)) rejected.add(s.id)
    })
    relay.signals.on('published', (s) => settled.add(s.id))
    // The longest a row waits after a nack, however many batches in a row were nacked (the relay's
    // cap on its rejection backoff). Without the cap, REJECTED_BATCHES nacked batches would put rows
    // off by 250 ms × 2^10 (at least 2 min with jitter), far past it.
    const CAP_MS = 5_000
    const REJECTED_BATCHES = 11
    let deferredMostMs = 0
    const deferredNow = async (): Promise<number> => {
      const { rows } = await f.db.pool.query<{ ms: number | null }>(
        `SELECT (extract(epoch FROM max(available_at) - clock_timestamp()) * 1000)::float8 AS ms
         FROM outbox_message WHERE published_at IS NULL AND failed_at IS NULL`,
      )
      deferredMostMs = Math.max(deferredMostMs, rows[0]?.ms ?? 0)
      return deferredMostMs
    }
    await relay.start()
    const ids: string[] = []
    // A quorum queue applies its limit a moment late: keep committing batches of four, each settled
    // before the next, until enough whole batches in a row were nacked.
    let rejectedBatches = 0
    await f.until(
      async () => {
        const batch = await f.commit(Array.from({ length: 4 }, (_, n) => message(n, 'capped.happened')))
        ids.push(...batch)
        relay.wake()
        await f.until(() => batch.every((id) => settled.has(id)), 30_000, 'the batch to settle')
        rejectedBatches = batch.every((id) => rejected.has(id)) ? rejectedBatches + 1 : 0
        await deferredNow()
        return rejectedBatches >= REJECTED_BATCHES
      },
      60_000,
      'the broker to nack publishes',
    )
    await rabbitmqctl('clear_policy', policy)
    const channel = await admin.createChannel()
    await channel.purgeQueue(queue)
    await channel.close()
    await f.until(
      async () => {
        await deferredNow()
        return (await pendingCount(f.db.pool)) === 0
      },
      30_000,
      'every row to be published',
    )
    const { rows } = await f.db.pool.query<{ attempts: number; failed_at: Date | null }>(
      'SELECT attempts, failed_at FROM outbox_message WHERE id = ANY($1::uuid[])',
      [ids],
    )
    expect(rows).toHaveLength(ids.length)
    expect(rows.every((row) => row.failed_at === null && row.attempts === 0)).toBe(true)
    // available_at is the marking transaction's now() plus the delay, and clock_timestamp() is
    // later than that now(): whatever the load, the measured deferral is at most the delay.
    expect(deferredMostMs).toBeGreaterThan(0)
    expect(deferredMostMs).toBeLessThanOrEqual(CAP_MS)
    expect(relay.stats().parkedTotal).toBe(0)
    await relay.stop()
  }, 120_000)
})
