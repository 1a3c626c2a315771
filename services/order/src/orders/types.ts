import type { Prisma, PrismaClient } from '../generated/prisma/client.js'

/** A transaction in the order database (a Prisma interactive transaction). */
export type Tx = Prisma.TransactionClient

/** The client reads go through. */
export type Db = PrismaClient

/**
 * Opens a transaction whose `enqueue`d rows the relay publishes right after commit; in the app this is
 * `messaging.transaction`.
 */
export interface Transactor {
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
}
