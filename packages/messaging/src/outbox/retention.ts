import { positiveInteger } from '../errors.js'
import type pg from 'pg'
import {
  deleteOldInbox,
  deletePublishedOutbox,
  RESET_STATEMENT_TIMEOUT,
  SET_SESSION_STATEMENT_TIMEOUT,
  VACUUM_OUTBOX,
} from '../sql.js'
import { boundedQuery, HOUSEKEEPING_BOUNDS } from './bounded-query.js'

/** Options of `deleteExpired`. */
export interface RetentionOptions {
  /** Published outbox rows older than this are deleted, ms. */
  retentionMs: number
  /**
   * Inbox rows older than this are deleted, ms. Default 7 days: far longer than any retry or
   * redelivery, since a message redelivered after its inbox row is gone would take effect twice.
   */
  inboxRetentionMs?: number
  /** Rows per DELETE. Default 1,000: short statements, short locks. */
  chunkSize?: number
  /** Most chunks per table per run. Default 20, so one run stays bounded; the next run continues. */
  maxChunks?: number
}

/** Rows deleted by one run. */
export interface RetentionResult {
  outbox: number
  inbox: number
}

/** Default inbox retention, ms (7 days). */
export const DEFAULT_INBOX_RETENTION_MS = 7 * 24 * 3_600_000

async function inChunks(
  pool: pg.Pool,
  sql: (ageMs: number, limit: number) => string,
  ageMs: number,
  { chunkSize = 1_000, maxChunks = 20 }: Pick<RetentionOptions, 'chunkSize' | 'maxChunks'>,
): Promise<number> {
  if (!Number.isFinite(ageMs) || ageMs < 0)
    throw new RangeError(`retention age must be a non-negative number of ms, got ${ageMs}`)
  positiveInteger('chunk size', chunkSize)
  const statement = sql(Math.floor(ageMs), chunkSize)
  let total = 0
  for (let chunk = 0; chunk < maxChunks; chunk += 1) {
    const { rowCount } = await boundedQuery(pool, statement, HOUSEKEEPING_BOUNDS)
    total += rowCount ?? 0
    if ((rowCount ?? 0) < chunkSize) break
  }
  return total
}

/**
 * Deletes published outbox rows older than `retentionMs` and inbox rows older than
 * `inboxRetentionMs` (database clock), in chunks of `chunkSize` (one short transaction each,
 * `HOUSEKEEPING_BOUNDS`), at most `maxChunks` per table per run. Promptly: dead index entries
 * slowed claims 25-50 % within 20 s on a busy table.
 * @throws the database error of a failed DELETE (rows deleted before it stay deleted); RangeError
 * for a negative or non-finite age or a chunk size that is not a positive integer.
 */
export async function deleteExpired(pool: pg.Pool, options: RetentionOptions): Promise<RetentionResult> {
  const outbox = await inChunks(pool, deletePublishedOutbox, options.retentionMs, options)
  return { outbox, inbox: await deleteExpiredInbox(pool, options) }
}

/**
 * Longest a VACUUM of the outbox may run, ms. Above the services' per-statement bound
 * (`DATABASE_STATEMENT_TIMEOUT_MS`, 5 s by default, set on every pooled session), because a vacuum
 * cancelled half-way has done its work for nothing and starts over at the next run.
 */
export const VACUUM_TIMEOUT_MS = 60_000

/**
 * `VACUUM (SKIP_LOCKED) outbox_message`, bounded by `timeoutMs` instead of the session's
 * statement_timeout (restored after): claims walk past the dead index entries marks leave (100 rows:
 * 39 ms fresh, 77 ms after 30,000 published, 44 ms after VACUUM), and autovacuum waits for 20 %.
 * A role that does not own the table gets a warning, not an error.
 */
export async function vacuumOutbox(pool: pg.Pool, timeoutMs = VACUUM_TIMEOUT_MS): Promise<void> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    // VACUUM cannot run in a transaction block, so no SET LOCAL: the session's bound is raised, then RESET.
    await client.query(SET_SESSION_STATEMENT_TIMEOUT, [String(Math.max(1, Math.trunc(timeoutMs)))])
    await client.query(VACUUM_OUTBOX)
  } finally {
    await client.query(RESET_STATEMENT_TIMEOUT).catch((error: Error) => {
      broken = error
    })
    client.release(broken)
  }
}

/**
 * The inbox half of `deleteExpired` (default `DEFAULT_INBOX_RETENTION_MS`), for a consumer without a
 * relay (maybe without an outbox table). Resolves with the rows deleted.
 * @throws the database error of a failed DELETE; RangeError as `deleteExpired`.
 */
export async function deleteExpiredInbox(
  pool: pg.Pool,
  options: Omit<RetentionOptions, 'retentionMs'> = {},
): Promise<number> {
  return inChunks(pool, deleteOldInbox, options.inboxRetentionMs ?? DEFAULT_INBOX_RETENTION_MS, options)
}
