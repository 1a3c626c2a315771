import type pg from 'pg'
import type { Database, PgClientLike, PrismaTransactionLike, TransactionClient } from './types.js'

/** Thrown when messaging is handed something that is not an open transaction. */
export class NotInTransactionError extends Error {
  constructor(what: string) {
    super(
      `${what}: expected an open transaction (a Prisma interactive-transaction client, or a pg client after BEGIN); ` +
        'writing outside one would autocommit the row apart from the business change',
    )
    this.name = 'NotInTransactionError'
  }
}

/** The part of a PrismaClient messaging uses: its interactive transactions. */
export interface PrismaClientLike<Tx extends PrismaTransactionLike> {
  $transaction<T>(fn: (tx: Tx) => Promise<T>, options?: { maxWait?: number; timeout?: number }): Promise<T>
}

/** Options of `prismaDatabase`. */
export interface PrismaDatabaseOptions {
  /** Longest a transaction may run before Prisma rolls it back, ms. Default 10,000. */
  timeoutMs?: number
  /** Longest to wait for a pool connection to start one, ms. Default 5,000. */
  maxWaitMs?: number
}

/**
 * `Database` over a PrismaClient: each `transaction(fn)` is a Prisma interactive transaction.
 * Example: `prismaDatabase(prisma, { timeoutMs: 10_000 })`.
 */
export function prismaDatabase<Tx extends PrismaTransactionLike>(
  prisma: PrismaClientLike<Tx>,
  options: PrismaDatabaseOptions = {},
): Database<Tx> {
  const timeout = options.timeoutMs ?? 10_000
  const maxWait = options.maxWaitMs ?? 5_000
  return { transaction: (fn) => prisma.$transaction(fn, { timeout, maxWait }) }
}

/**
 * `Database` over a pg Pool: BEGIN on a pooled client, COMMIT when `fn` resolves, ROLLBACK when it
 * throws (the original error is rethrown). A client whose ROLLBACK failed, or whose connection died
 * during the transaction, is destroyed, not reused.
 */
export function pgDatabase(pool: pg.Pool): Database<pg.PoolClient> {
  return {
    async transaction(fn) {
      const client = await pool.connect()
      let broken: Error | undefined
      // A checked-out client whose connection dies between two statements emits 'error', and pg-pool
      // listens only while a client is idle: without this the process would get an uncaught exception
      // (the next statement, or COMMIT, then fails and the transaction rolls back as usual).
      const onError = (error: Error): void => {
        broken = error
      }
      client.on('error', onError)
      try {
        await client.query('BEGIN')
        const result = await fn(client)
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError
        })
        throw error
      } finally {
        client.off('error', onError)
        client.release(broken)
      }
    },
  }
}

/** Whether `tx` is a Prisma client (root or transaction) rather than a pg client. */
export function isPrismaClient(tx: TransactionClient): tx is PrismaTransactionLike {
  return typeof (tx as Partial<PrismaTransactionLike>).$executeRawUnsafe === 'function'
}

/** Result of `execute`: affected rows, and rows for a SELECT or a statement with RETURNING. */
export interface ExecuteResult<R = Record<string, unknown>> {
  rowCount: number
  rows: R[]
}

const RETURNS_ROWS = /^\s*(select|with|values)\b|\breturning\b/i

/**
 * Runs one parameterised statement (`$1`, `$2`, ...) on either transaction kind. On Prisma a
 * statement that returns rows (SELECT/WITH/VALUES or RETURNING) goes through `$queryRawUnsafe` and
 * `rowCount` is the number of rows; any other through `$executeRawUnsafe` (rows is empty).
 * Cast parameters in SQL (`$1::uuid`, `$2::jsonb`): Prisma sends them untyped.
 */
export async function execute<R = Record<string, unknown>>(
  tx: TransactionClient,
  sql: string,
  params: unknown[] = [],
): Promise<ExecuteResult<R>> {
  if (isPrismaClient(tx)) {
    if (RETURNS_ROWS.test(sql)) {
      const rows = await tx.$queryRawUnsafe<R[]>(sql, ...params)
      return { rowCount: rows.length, rows }
    }
    return { rowCount: await tx.$executeRawUnsafe(sql, ...params), rows: [] }
  }
  const result = await tx.query(sql, params)
  return { rowCount: result.rowCount ?? 0, rows: result.rows as R[] }
}

type PgClientProbe = PgClientLike & {
  totalCount?: unknown
  getTransactionStatus?: () => string | null
}

/**
 * Refuses anything that is not an open transaction, with `NotInTransactionError`:
 * - a root PrismaClient (it has `$connect`; an interactive-transaction client does not, checked
 *   on Prisma 7.10);
 * - a pg Pool (it has `totalCount`: each query would autocommit on some pooled connection);
 * - a pg client outside BEGIN. pg >= 8.12 keeps the server's transaction status from the last
 *   ReadyForQuery message ('I' idle, 'T' in a transaction, 'E' failed transaction), so the check
 *   costs no round trip. Older pg: a SAVEPOINT probe (fails outside a transaction block), two
 *   round trips (measured: a minimal BEGIN/COMMIT went from 0.18 to 0.53 ms with it).
 */
export async function assertInTransaction(tx: TransactionClient, what = 'enqueue'): Promise<void> {
  if (isPrismaClient(tx)) {
    if (typeof (tx as { $connect?: unknown }).$connect === 'function') {
      throw new NotInTransactionError(
        `${what} got a root PrismaClient, not the client of prisma.$transaction`,
      )
    }
    return
  }
  const client = tx as PgClientProbe
  if (client.totalCount !== undefined) {
    throw new NotInTransactionError(`${what} got a pg Pool, not a client inside BEGIN`)
  }
  if (typeof client.getTransactionStatus === 'function') {
    const status = client.getTransactionStatus()
    if (status === 'T') return
    if (status === 'E')
      throw new NotInTransactionError(`${what} got a pg client whose transaction already failed`)
    throw new NotInTransactionError(`${what} got a pg client outside BEGIN`)
  }
  try {
    await client.query('SAVEPOINT saga_messaging_probe')
  } catch {
    throw new NotInTransactionError(`${what} got a pg client outside BEGIN`)
  }
  await client.query('RELEASE SAVEPOINT saga_messaging_probe')
}
