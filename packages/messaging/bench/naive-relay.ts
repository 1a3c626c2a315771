/**
 * The design most tutorials show, for comparison only: every second, read the unpublished rows,
 * publish each one and wait for its own confirm, then mark it published with its own UPDATE.
 */
import amqp from 'amqplib'
import type pg from 'pg'
import { toPublishable, type OutboxRow } from '../src/outbox/envelope.js'
import { OUTBOX_COLUMNS } from '../src/sql.js'

export interface NaiveRelay {
  stop(): Promise<void>
}

export async function startNaiveRelay(pool: pg.Pool, amqpUrl: string, exchange: string): Promise<NaiveRelay> {
  // noDelay as ours, so the comparison is of the designs, not of socket settings.
  const connection = await amqp.connect(amqpUrl, { noDelay: true })
  const channel = await connection.createConfirmChannel()
  let running = true
  let timer: NodeJS.Timeout | undefined
  let round: Promise<void> = Promise.resolve()

  const publishOne = (row: OutboxRow): Promise<void> =>
    new Promise((resolve, reject) => {
      const message = toPublishable(row, 'bench')
      channel.publish(exchange, message.routingKey, message.content, message.options, (error: unknown) =>
        error ? reject(new Error('nacked')) : resolve(),
      )
    })

  const poll = async (): Promise<void> => {
    for (;;) {
      const { rows } = await pool.query<OutboxRow>(
        `SELECT ${OUTBOX_COLUMNS} FROM outbox_message WHERE published_at IS NULL ORDER BY occurred_at, id LIMIT 1000`,
      )
      for (const row of rows) {
        await publishOne(row)
        await pool.query('UPDATE outbox_message SET published_at = now() WHERE id = $1', [row.id])
      }
      if (rows.length < 1000 || !running) return
    }
  }

  const schedule = (): void => {
    timer = setTimeout(() => {
      round = poll()
        .catch((error: unknown) => console.error('naive relay round failed', error))
        .finally(() => running && schedule())
    }, 1_000)
  }
  schedule()

  return {
    async stop() {
      running = false
      clearTimeout(timer)
      await round
      await connection.close()
    },
  }
}
