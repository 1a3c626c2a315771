import { fileURLToPath } from 'node:url'
import { createMessaging, enqueue, pgDatabase, type Messaging, type OutgoingMessage } from '@saga/messaging'
import { AMQP_URL, createTestDatabase, type TestDatabase } from '@saga/testkit'
import type pg from 'pg'

const MESSAGING_SQL = fileURLToPath(
  new URL('../../../../packages/messaging/sql/messaging.sql', import.meta.url),
)

/** A bare messaging instance with its own outbox, standing in for the other services of the saga. */
export interface Upstream {
  publish(message: OutgoingMessage): Promise<void>
  close(): Promise<void>
}

/** Starts an upstream publisher on `exchange` with its own per-run database. */
export async function startUpstream(exchange: string, prefix: string): Promise<Upstream> {
  const db: TestDatabase = await createTestDatabase({ prefix, sqlFiles: [MESSAGING_SQL] })
  const messaging: Messaging<pg.PoolClient> = createMessaging({
    service: 'upstream',
    database: pgDatabase(db.pool),
    pool: db.pool,
    amqpUrl: AMQP_URL,
    exchange,
  })
  await messaging.start()
  return {
    publish: (message) => messaging.transaction((tx) => enqueue(tx, message).then(() => undefined)),
    async close() {
      await messaging.stop()
      await db.drop()
    },
  }
}
