import type pg from 'pg'
import { OUTBOX_COLUMNS, type OutboxRow } from './envelope.js'

/**
 * The claim's longest wait for a lock, ms. SKIP LOCKED never waits for a row, but the table lock
 * can queue behind a migration's `ALTER TABLE outbox_message`: the relay then gives up
 * after 1 s, backs off and claims again once the ALTER is through, instead of holding a
 * connection in the lock queue for as long as the migration waits.
 */
export const CLAIM_LOCK_TIMEOUT_MS = 1_000

/**
 * Opens the relay's transaction and claims up to `limit` due rows, oldest first, locking them for
 * this transaction, in one round trip (a simple-protocol query of several statements; the numbers
 * are ours, checked integers).
 *
 * - SKIP LOCKED lets any number of relays claim side by side without ever holding the same row (a
 *   row locked by another relay is skipped, not waited for).
 * - No cursor: a row from a transaction that committed late is due like any other.
 * - `idle_in_transaction_session_timeout` and `statement_timeout` (= `guardMs`): a relay that
 *   freezes while holding the locks is cut off by the server, and its rows go to the others.
 * - `lock_timeout` (`CLAIM_LOCK_TIMEOUT_MS`): a claim queued behind a table lock gives up.
 * - `synchronous_commit = off`: the relay's marks need no WAL flush of their own. A mark lost in
 *   a database crash only means the row is published again (at least once; consumers dedupe),
 *   and it saves a disk flush per batch.
 *
 * `only`: claim among these rows alone (UUIDs; a suspect of a broker refusal is claimed by id).
 * @throws RangeError for a `limit` or `guardMs` that is not a positive integer, Error for an `only`
 * id that is not a UUID, and the database's errors
 */
export async function beginAndClaim(
  client: pg.ClientBase,
  limit: number,
  guardMs: number,
  only?: readonly string[],
): Promise<OutboxRow[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`batch size must be a positive integer, got ${limit}`)
  if (!Number.isInteger(guardMs) || guardMs < 1)
    throw new RangeError(`guard must be a positive integer of ms, got ${guardMs}`)
  const among = only ? `AND id = ANY(${uuidArrayLiteral(only, 'claim')})` : ''
  const results = (await client.query(
    `BEGIN;
     SET LOCAL idle_in_transaction_session_timeout = ${guardMs};
     SET LOCAL statement_timeout = ${guardMs};
     SET LOCAL lock_timeout = ${CLAIM_LOCK_TIMEOUT_MS};
     SET LOCAL synchronous_commit = off;
     SELECT ${OUTBOX_COLUMNS} FROM outbox_message
     WHERE published_at IS NULL AND failed_at IS NULL AND available_at <= now() ${among}
     ORDER BY available_at, id
     LIMIT ${limit}
     FOR UPDATE SKIP LOCKED`,
  )) as unknown as pg.QueryResult<OutboxRow>[]
  return results.at(-1)?.rows ?? []
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * `ids` as a `uuid[]` literal to inline in a simple query (which takes no parameters); inlining is
 * safe only because each id is checked to be a UUID (they are the outbox's own).
 * @throws Error naming `what` when an id is not a UUID
 */
export function uuidArrayLiteral(ids: readonly string[], what: string): string {
  if (!ids.every((id) => UUID.test(id))) throw new Error(`${what}: every id must be a UUID`)
  return `'{${ids.join(',')}}'::uuid[]`
}

/**
 * Marks rows published (confirmed by the broker) and, with `commit`, commits in the same round
 * trip. The ids are inlined (`uuidArrayLiteral`; they come from the claim).
 */
export async function markPublished(client: pg.ClientBase, ids: string[], commit = false): Promise<void> {
  if (ids.length === 0) {
    if (commit) await client.query('COMMIT')
    return
  }
  const update = `UPDATE outbox_message SET published_at = now() WHERE id = ANY(${uuidArrayLiteral(ids, 'markPublished')})`
  await client.query(commit ? `${update}; COMMIT` : update)
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
 * Records a failed publish: last_error, available_at = now + delay (the database's clock); a row
 * whose failure `counts` gets attempts + 1, and a `parkable` one `failed_at` once its attempts reach
 * `maxAttempts`, a `parkNow` one at once (parked: never claimed again, kept for a person).
 */
export async function markFailed(
  client: pg.ClientBase,
  failed: FailedRow[],
  maxAttempts: number,
): Promise<FailedResult[]> {
  if (failed.length === 0) return []
  const { rows } = await client.query<FailedResult>(
    `UPDATE outbox_message AS o SET
       attempts = o.attempts + f.counts::int,
       last_error = left(f.error, 2000),
       available_at = now() + f.delay_ms * interval '1 millisecond',
       failed_at = CASE WHEN f.park_now OR (f.parkable AND o.attempts + 1 >= $4) THEN now() END
     FROM unnest($1::uuid[], $2::text[], $3::int[], $5::bool[], $6::bool[], $7::bool[])
       AS f(id, error, delay_ms, parkable, counts, park_now)
     WHERE o.id = f.id
     RETURNING o.id, o.type, o.attempts, o.failed_at IS NOT NULL AS parked`,
    [
      failed.map((f) => f.id),
      failed.map((f) => f.error),
      failed.map((f) => f.delayMs),
      maxAttempts,
      failed.map((f) => f.parkable),
      failed.map((f) => f.counts),
      failed.map((f) => f.parkNow),
    ],
  )
  return rows
}
