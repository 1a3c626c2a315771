import amqp from 'amqplib'
import { randomUUID } from 'node:crypto'
import { toPublishable } from '../src/outbox/envelope.js'

/**
 * The floor the relay is measured against: plain amqplib publishing `count` persistent, mandatory
 * messages on one confirm channel in batches of `batchSize`, awaiting the broker's confirms per
 * batch (`waitForConfirms`), with no database at all. Each message is the wire form the relay would
 * send for a row of the bench's backlog (same envelope, same properties, built once up front, so the
 * loop measures AMQP alone). Returns messages per second.
 */
export async function plainPublishRate(
  amqpUrl: string,
  exchange: string,
  count: number,
  batchSize: number,
): Promise<number> {
  const messages = Array.from({ length: count }, (_, n) =>
    toPublishable(
      {
        id: randomUUID(),
        type: 'bench.happened.v1',
        routing_key: 'bench.happened',
        payload: { n, orderId: randomUUID(), amount: 1999, currency: 'EUR' },
        headers: { correlationId: 'bench' },
        aggregate_id: null,
        occurred_at: new Date(),
        attempts: 0,
      },
      'bench',
    ),
  )
  const connection = await amqp.connect(amqpUrl)
  try {
    const channel = await connection.createConfirmChannel()
    const started = performance.now()
    for (let i = 0; i < count; i += batchSize) {
      for (const message of messages.slice(i, i + batchSize)) {
        channel.publish(exchange, message.routingKey, message.content, message.options)
      }
      await channel.waitForConfirms()
    }
    const seconds = (performance.now() - started) / 1_000
    await channel.close()
    return count / seconds
  } finally {
    await connection.close()
  }
}
