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

  it('when the broker nacks rows until a queue limit is lifted, then no attempt is spent, nothing is parked, and every row goes out within seconds on a fresh channel', async () => {
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
    const rejected: string[] = []
    relay.signals.on('publishFailed', (s) => {
      if (/nack/.test(s.error)) rejected.push(s.id)
    })
    await relay.start()
    const ids: string[] = []
    // A quorum queue applies its limit a moment late: keep committing until the broker nacks.
    await f.until(
      async () => {
        ids.push(...(await f.commit(Array.from({ length: 4 }, (_, n) => message(n, 'capped.happened')))))
        relay.wake()
        await new Promise((resolve) => setTimeout(resolve, 100))
        return rejected.length >= 4
      },
      20_000,
      'the broker to nack publishes',
    )
    await rabbitmqctl('clear_policy', policy)
    const channel = await admin.createChannel()
    await channel.purgeQueue(queue)
    await channel.close()
    const liftedAt = performance.now()
    await f.until(async () => (await pendingCount(f.db.pool)) === 0, 15_000, 'every row to be published')
    const recoveryMs = performance.now() - liftedAt
    const { rows } = await f.db.pool.query<{ attempts: number; failed_at: Date | null }>(
      'SELECT attempts, failed_at FROM outbox_message WHERE id = ANY($1::uuid[])',
      [ids],
    )
    expect(rows).toHaveLength(ids.length)
    expect(rows.every((row) => row.failed_at === null && row.attempts === 0)).toBe(true)
    // The rows wait at most 5 s after a nack, plus a round or two.
    expect(recoveryMs).toBeLessThan(7_000)
    expect(relay.stats().parkedTotal).toBe(0)
    await relay.stop()
  })
})
