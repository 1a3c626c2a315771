import type pg from 'pg'
import { OUTBOX_COLUMNS, type OutboxRow } from './envelope.js'

/**
 * Claims up to `limit` due rows, oldest first, locking them for this transaction. SKIP LOCKED lets
 * any number of relays claim side by side without ever holding the same row (a row locked by
 * another relay is skipped, not waited for). No cursor: a row from a transaction that committed
 * late is due like any other.
 */
export async function claimRows(client: pg.ClientBase, limit: number): Promise<OutboxRow[]> {
  const { rows } = await client.query<OutboxRow>(
    `SELECT ${OUTBOX_COLUMNS} FROM outbox_message
     WHERE published_at IS NULL AND failed_at IS NULL AND available_at <= now()
     ORDER BY available_at, id
     LIMIT $1
     FOR UPDATE SKIP LOCKED`,
    [limit],
  )
  return rows
}

/** Marks rows published (confirmed by the broker). */
export async function markPublished(client: pg.ClientBase, ids: string[]): Promise<void> {
  if (ids.length === 0) return
  await client.query('UPDATE outbox_message SET published_at = now() WHERE id = ANY($1::uuid[])', [ids])
}

/** One row whose publish failed this attempt. */
export interface FailedRow {
  id: string
  error: string
  /** Retry after this many ms. */
  delayMs: number
  /** Set `failed_at` (park) once attempts reach `maxAttempts`. */
  parkable: boolean
}

/** A failed row after the update: its attempts now, and whether it was parked. */
export interface FailedResult {
  id: string
  type: string
  attempts: number
  parked: boolean
}

/**
 * Records a failed attempt: attempts + 1, last_error, available_at = now + delay; a parkable row
 * whose attempts reach `maxAttempts` gets `failed_at` (parked: never claimed again, kept for a person).
 */
export async function markFailed(
  client: pg.ClientBase,
  failed: FailedRow[],
  maxAttempts: number,
): Promise<FailedResult[]> {
  if (failed.length === 0) return []
  const { rows } = await client.query<FailedResult>(
    `UPDATE outbox_message AS o SET
       attempts = o.attempts + 1,
       last_error = left(f.error, 2000),
       available_at = now() + f.delay_ms * interval '1 millisecond',
       failed_at = CASE WHEN f.parkable AND o.attempts + 1 >= $4 THEN now() END
     FROM unnest($1::uuid[], $2::text[], $3::int[], $5::bool[]) AS f(id, error, delay_ms, parkable)
     WHERE o.id = f.id
     RETURNING o.id, o.type, o.attempts, o.failed_at IS NOT NULL AS parked`,
    [
      failed.map((f) => f.id),
      failed.map((f) => f.error),
      failed.map((f) => f.delayMs),
      maxAttempts,
      failed.map((f) => f.parkable),
    ],
  )
  return rows
}
