import { positiveInteger } from '../errors.js'
import type pg from 'pg'
import {
  CLAIM_RESULTS,
  claimDue,
  COMMIT,
  expectResults,
  MARK_FAILED,
  markPublishedAndCommit,
  type StatementResult,
} from '../sql.js'
import type { OutboxRow } from './envelope.js'

/**
 * The claim's longest wait for a lock, ms: a claim queued behind a migration's `ALTER TABLE` gives
 * up and retries instead of holding a connection as long as the migration waits.
 */
export const CLAIM_LOCK_TIMEOUT_MS = 1_000

/**
 * Opens the relay's transaction and claims up to `limit` due rows, oldest first, in one round trip
 * (`claimDue`): SKIP LOCKED, so relays never hold or wait for the same row; no cursor, so a row
 * committed late is due like any other; `guardMs` as `idle_in_transaction_session_timeout` and
 * `statement_timeout`, so the server cuts off a relay frozen holding the locks; `lock_timeout`
 * (`CLAIM_LOCK_TIMEOUT_MS`); `synchronous_commit = off` (a mark lost in a crash only publishes the
 * row again). `only`: claim among these UUIDs alone (a suspect of a broker refusal).
 * @throws RangeError for a `limit` or `guardMs` that is not a positive integer, SqlValueError for an
 * `only` id that is not a UUID, SqlResultError for an answer that is not the claim's, and the
 * database's errors
 */
export async function beginAndClaim(
  client: pg.ClientBase,
  limit: number,
  guardMs: number,
  only?: readonly string[],
): Promise<OutboxRow[]> {
  positiveInteger('batch size', limit)
  positiveInteger('guard', guardMs, ' of ms')
  const results = (await client.query(
    claimDue(limit, { guardMs, lockTimeoutMs: CLAIM_LOCK_TIMEOUT_MS }, only),
  )) as StatementResult | StatementResult[]
  const [, , , , , claimed] = expectResults(results, CLAIM_RESULTS, 'outbox claim')
  return (claimed?.rows ?? []) as OutboxRow[]
}

/**
 * Marks the claimed rows `ids` published and commits the claim's transaction in the same round trip
 * (`markPublishedAndCommit`); with no ids it only commits.
 * @throws SqlResultError when the COMMIT answered ROLLBACK, and the database's errors
 */
export async function markPublished(client: pg.ClientBase, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) {
    expectResults(await client.query(COMMIT), [COMMIT], 'outbox claim commit')
    return
  }
  const results = (await client.query(markPublishedAndCommit(ids))) as StatementResult | StatementResult[]
  expectResults(results, ['UPDATE', COMMIT], 'outbox mark published')
}

/** One row whose publish failed this attempt. */
export interface FailedRow {
  id: string
  error: string
  /** Retry after this many ms. */
  delayMs: number
  /** Counts an attempt (`attempts + 1`): the row's own backoff grows with it. */
  counts: boolean
  /**
   * The row's own fault (poison): sets `failed_at` (park) once attempts reach `maxAttempts`. A link,
   * broker or topology fault (false) never parks a row.
   */
  parkable: boolean
  /** Parks the row now, whatever its attempts: the broker refused the message itself. */
  parkNow: boolean
}

/** A failed row after the update: its attempts now, and whether it was parked. */
export interface FailedResult {
  id: string
  type: string
  attempts: number
  parked: boolean
}

/**
 * Records failed publishes: last_error, available_at = now + delay; a failure that `counts` adds an
 * attempt; a `parkable` row is parked (`failed_at`) at `maxAttempts`, a `parkNow` one at once.
 */
export async function markFailed(
  client: pg.ClientBase,
  failed: FailedRow[],
  maxAttempts: number,
): Promise<FailedResult[]> {
  if (failed.length === 0) return []
  const { rows } = await client.query<FailedResult>(MARK_FAILED, [
    failed.map((f) => f.id),
    failed.map((f) => f.error),
    failed.map((f) => f.delayMs),
    maxAttempts,
    failed.map((f) => f.parkable),
    failed.map((f) => f.counts),
    failed.map((f) => f.parkNow),
  ])
  return rows
}
