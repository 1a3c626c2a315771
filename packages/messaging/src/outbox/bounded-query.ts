import { positiveInteger } from '../errors.js'
import type pg from 'pg'
import { withPooledClient } from '../database.js'
import { bounded, BOUNDED_RESULTS, expectResults, type StatementResult } from '../sql.js'

/** How long the relay's own statements may wait, ms; see `boundedQuery`. */
export interface StatementBounds {
  /** `lock_timeout`: longest wait for a table or row lock. */
  lockTimeoutMs: number
  /** `statement_timeout`: longest run of one statement, waiting included. */
  statementTimeoutMs: number
}

/**
 * The relay's bounds on its housekeeping statements: 1 s for a lock (a lock queued behind a
 * migration's ALTER gives up and lets it through), 5 s for a statement (they take milliseconds).
 */
export const HOUSEKEEPING_BOUNDS: StatementBounds = { lockTimeoutMs: 1_000, statementTimeoutMs: 5_000 }

/**
 * Runs `sql` (one statement of sql.ts) in its own short transaction with `lock_timeout` and
 * `statement_timeout` set for it only (`bounded`), one round trip; rolled back on an error.
 * @throws the database error, e.g. 55P03 lock_not_available or 57014 query_canceled on a timeout.
 */
export async function boundedQuery<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  sql: string,
  bounds: StatementBounds,
): Promise<pg.QueryResult<R>> {
  const lock = positiveInteger('lockTimeoutMs', bounds.lockTimeoutMs, ' of ms')
  const statement = positiveInteger('statementTimeoutMs', bounds.statementTimeoutMs, ' of ms')
  return withPooledClient(pool, async (client) => {
    const results = (await client.query(bounded(sql, lock, statement))) as StatementResult | StatementResult[]
    const [, , , result] = expectResults(results, BOUNDED_RESULTS, 'boundedQuery')
    return result as pg.QueryResult<R>
  })
}
