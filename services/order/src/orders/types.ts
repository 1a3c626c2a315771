import type pg from 'pg'
import type { PrismaClient } from '../generated/prisma/client.js'

/**
 * A transaction in the order database: a pooled pg client inside BEGIN (`pgDatabase(app.pool)`), so
 * POST /orders and the reactions write without Prisma (one pg call per statement, named statements
 * prepared once per connection).
 */
export type Tx = pg.PoolClient

/** The client reads go through. */
export type Db = PrismaClient

/**
 * Opens a transaction whose `enqueue`d rows the relay publishes right after commit; in the app this is
 * `messaging.transaction`.
 */
export interface Transactor {
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
}
