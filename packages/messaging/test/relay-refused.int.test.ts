import amqp from 'amqplib'
import { PRIVATE_RABBITMQ_HOOKS, startPrivateRabbitmq, tapQueue, useFixture } from '@saga/testkit'
import { describe, expect, it } from 'vitest'
import { pgDatabase } from '../src/database.js'
import { createMessaging } from '../src/messaging.js'
import { enqueue } from '../src/outbox/enqueue.js'
import type { Publishable } from '../src/outbox/envelope.js'
import { publishBatch } from '../src/outbox/publisher.js'
import type { OutgoingMessage } from '../src/types.js'
import { message, relayFixture } from './relay-fixture.js'

/** A parked row pending again, as @saga/messaging-admin's `retryParked` makes it: `$1` the row's id. */
const RETRY_PARKED = `UPDATE outbox_message SET failed_at = NULL, attempts = 0, last_error = NULL,
  available_at = now() WHERE id = $1 AND failed_at IS NOT NULL AND published_at IS NULL RETURNING id`

/** RabbitMQ's default `max_message_size` (3.10: 128 MiB). */
const DEFAULT_MAX_MESSAGE_SIZE = 134_217_728

/** A message whose body is over `bytes` once it is an envelope. */
function bigMessage(bytes: number): OutgoingMessage<{ n: number; filler: string }> {
  return { ...message(99), payload: { n: 99, filler: 'x'.repeat(bytes) } }
}

// The broker refuses a message over its `max_message_size` by closing the channel with 406 on
// basic.publish. The limit is node-wide, so this file lowers it on a node of its own. A channel reads
// the limit when it opens: it is set before the relay connects, and a raised limit takes effect for
// the channels of new connections (an operator's broker restart; here the node closes its connections).
describe('relay: a message the broker refuses', () => {
  const f = useFixture(() => relayFixture('relay_refused'))
  const broker = useFixture(startPrivateRabbitmq, (b) => b.stop(), PRIVATE_RABBITMQ_HOOKS)
  const setMaxMessageSize = (bytes: number) =>
    broker.ctl('eval', `application:set_env(rabbit, max_message_size, ${bytes}).`)

  it('when a message is over the broker limit, then its row is parked at once with the broker reason and logged once, the rest of its batch goes out, and it goes out once the limit is raised and the row retried', async () => {
    await setMaxMessageSize(3_000)
    const messaging = createMessaging({
      service: 'refused-test',
      database: pgDatabase(f.db.pool),
      pool: f.db.pool,
      amqpUrl: broker.url,
      exchange: f.exchange,
      logger: f.logger,
      relay: { retentionIntervalMs: 0 },
    })
    const failures: string[] = []
    const parked: string[] = []
    const published = new Set<string>()
    let big = ''
    messaging.signals.on('publishFailed', (s) => s.id === big && failures.push(s.error))
    messaging.signals.on('parked', (s) => s.id === big && parked.push(s.error))
    messaging.signals.on('published', (s) => published.add(s.id))
    let tap = await tapQueue(broker.url, f.exchange)
    try {
      await messaging.start()
      // Commit-published and, once given back, swept: both paths meet the refusal.
      const [before, after] = await messaging.transaction(async (tx) => {
        const first = await enqueue(tx, message(1))
        big = await enqueue(tx, bigMessage(4_000))
        return [first, await enqueue(tx, message(2))]
      })
      await f.until(() => parked.length > 0, 30_000, 'the big row to be parked')
      await f.until(() => [before, after].every((id) => published.has(id)), 30_000, 'the rest to go out')

      const reason = /406 \(PRECONDITION-FAILED\).*message size \d+ is larger than configured max size 3000/
      expect(parked[0]).toMatch(reason)
      const row = await f.row(big)
      // Parked on the refusal itself: one attempt, not maxAttempts of them.
      expect(row.attempts).toBe(1)
      expect(row.last_error).toMatch(reason)
      expect(row.failed_at).toBeInstanceOf(Date)
      expect(messaging.stats().relay).toMatchObject({ refusedTotal: 1, parkedTotal: 1 })
      const errors = f.logger.entries.filter(
        (e) => e.level === 'error' && (e.obj as { messageId?: string }).messageId === big,
      )
      expect(errors.map((e) => [e.msg, (e.obj as { type?: string }).type])).toEqual([
        ['outbox row parked', 'test.happened.v1'],
      ])

      await setMaxMessageSize(DEFAULT_MAX_MESSAGE_SIZE)
      await broker.ctl('close_all_connections', 'max_message_size raised')
      // The tap's connection went too, and its exclusive queue with it.
      await tap.delete().catch(() => undefined)
      tap = await tapQueue(broker.url, f.exchange)
      // What @saga/messaging-admin's retry (the console's, the CLI's) runs: the row pending again,
      // then a NOTIFY on the relays' wake-up channel.
      const retried = await f.db.pool.query(RETRY_PARKED, [big])
      expect(retried.rows).toEqual([{ id: big }])
      await f.db.pool.query('SELECT pg_notify($1, $2)', ['outbox', 'refused-test-admin'])
      await tap.waitFor((m) => m.messageId === big, 60_000, 'the retried big row')
      // Refused once by the sweep, at most once more by publish on commit: never a retry loop.
      expect(failures.length).toBeLessThanOrEqual(2)
      expect(messaging.stats().relay.refusedTotal).toBe(1)
    } finally {
      await messaging.stop()
      await tap.delete()
      await setMaxMessageSize(DEFAULT_MAX_MESSAGE_SIZE)
    }
  }, 180_000)

  it('when the broker refuses a message without naming its size, then the batch is suspect, and a message published alone is refused by name', async () => {
    // A user_id other than the connection's user is a 406 on basic.publish too (RabbitMQ's
    // validated user-id), with a reason that names no size.
    const connection = await amqp.connect(broker.url)
    try {
      await (await connection.createChannel()).assertExchange(f.exchange, 'topic', { durable: true })
      const publishable = (n: number, userId?: string): { id: string; message: Publishable } => ({
        id: `00000000-0000-4000-8000-00000000000${n}`,
        message: {
          routingKey: 'test.happened',
          content: Buffer.from(`{"n":${n}}`),
          options: { messageId: `m${n}`, ...(userId ? { userId } : {}) },
        },
      })
      const inBatch = await publishBatch(
        await connection.createConfirmChannel(),
        f.exchange,
        [publishable(1), publishable(2, 'someone-else'), publishable(3)],
        30_000,
      )
      expect(inBatch.failed.every((failure) => failure.kind !== 'refused')).toBe(true)
      expect(inBatch.suspects).toContain(publishable(2).id)
      expect(inBatch.channelBroken).toBe(true)

      const alone = await publishBatch(
        await connection.createConfirmChannel(),
        f.exchange,
        [publishable(2, 'someone-else')],
        30_000,
        true,
      )
      expect(alone.failed.map((failure) => failure.kind)).toEqual(['refused'])
      expect(alone.failed[0]?.error).toMatch(/406.*user_id property/)
      expect(alone.suspects).toEqual([])
    } finally {
      await connection.close()
    }
  })
})
