import type pg from 'pg'
import { bounded, BOUNDED_RESULTS, expectResults, ROLLBACK, type StatementResult } from '../sql.js'

/** How long the relay's own statements may wait, ms; see `boundedQuery`. */
export interface StatementBounds {
  /** `lock_timeout`: longest wait for a table or row lock. */
  lockTimeoutMs: number
  /** `statement_timeout`: longest run of one statement, waiting included. */
  statementTimeoutMs: number
}

/**
 * The relay's bounds on its housekeeping statements (stats, retention). 1 s for a lock: the one
 * lock they can wait for is a table lock queued behind a migration's `ALTER TABLE` (a queued
 * ALTER holds every later statement on the table for as long as it waits); giving up after a second
 * and retrying later lets the ALTER through and frees the connection. 5 s for a statement: a
 * chunk of 1,000 rows or a count over the pending index takes milliseconds.
 */
export const HOUSEKEEPING_BOUNDS: StatementBounds = { lockTimeoutMs: 1_000, statementTimeoutMs: 5_000 }

const checked = (name: string, ms: number): number => {
  if (!Number.isInteger(ms) || ms < 1)
    throw new RangeError(`${name} must be a positive integer of ms, got ${ms}`)
  return ms
}

/**
 * Runs `sql` (one statement of sql.ts, values inlined by its checked `int`: the simple protocol
 * takes no parameters) in its own short transaction with `lock_timeout` and `statement_timeout`
 * set for that transaction only (`SET LOCAL`), so the limits never leak to the pool's other users.
 * One round trip: `BEGIN; SET LOCAL ...; <sql>; COMMIT`. On an error the transaction is rolled back
 * and the connection returned to the pool clean.
 * @throws the database error, e.g. 55P03 lock_not_available or 57014 query_canceled on a timeout.
 */
export async function boundedQuery<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  sql: string,
  bounds: StatementBounds,
): Promise<pg.QueryResult<R>> {
  const lock = checked('lockTimeoutMs', bounds.lockTimeoutMs)
  const statement = checked('statementTimeoutMs', bounds.statementTimeoutMs)
  const client = await pool.connect()
  // A checked-out pg client that loses its connection emits 'error'; unhandled, it would crash the process.
  const onError = (): void => undefined
  client.on('error', onError)
  let broken: Error | undefined
  try {
    const results = (await client.query(bounded(sql, lock, statement))) as StatementResult | StatementResult[]
    const [, , , result] = expectResults(results, BOUNDED_RESULTS, 'boundedQuery')
    return result as pg.QueryResult<R>
  } catch (error) {
    await client.query(ROLLBACK).catch((rollbackError: unknown) => (broken = rollbackError as Error))
    throw error
  } finally {
    client.off('error', onError)
    // A client whose ROLLBACK failed may be half-way through a transaction: destroy it.
    client.release(broken)
  }
}
