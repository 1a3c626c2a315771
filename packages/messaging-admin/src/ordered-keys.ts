import type pg from 'pg'
import { recordAdminAction } from './actions.js'
import { BEGIN, COMMIT, LOCK_ORDERED_KEY, ROLLBACK, SKIP_ORDERED_KEY, STUCK_KEYS } from './sql.js'

/**
 * An ordered key that does not move (`@saga/messaging`, handlers with `ordering: 'per-key'`):
 * `blocked` by a dead-lettered message (`blockedBy`, its sequence, since when, why), or with a
 * `gap` (a held delivery has waited past the gap time for a predecessor that has not come).
 * Sequences are decimal strings; times ISO 8601.
 */
export interface StuckKey {
  handler: string
  producer: string
  key: string
  state: 'blocked' | 'gap'
  /** The last sequence handled (or skipped). */
  lastSeq: string
  blockedBy: string | null
  blockedSeq: string | null
  blockedSince: string | null
  reason: string | null
  /** Deliveries held behind it. */
  waiting: number
  firstWaiting: string | null
  waitingSince: string | null
}

type StuckRow = Omit<StuckKey, 'state' | 'blockedSince' | 'waitingSince'> & {
  blockedSince: Date | null
  waitingSince: Date | null
}

/** PostgreSQL's undefined_table: the service has not applied per-key order's tables. */
const UNDEFINED_TABLE = '42P01'

/**
 * Stuck ordered keys, oldest first; of `handler` only when given. `gapAfterMs` as the consumers'.
 * None for a service without per-key order's tables (it has no ordered handler), so a console may
 * ask every service. @throws the database's other errors
 */
export async function stuckKeys(
  pool: pg.Pool,
  filter: { handler?: string | undefined; limit: number },
  gapAfterMs: number,
): Promise<StuckKey[]> {
  const params = [filter.handler ?? null, gapAfterMs, filter.limit]
  const rows = await pool.query<StuckRow>(STUCK_KEYS, params).then(
    (result) => result.rows,
    (error: unknown) => {
      if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return []
      throw error
    },
  )
  return rows.map((row) => ({
    ...row,
    state: row.blockedBy ? 'blocked' : 'gap',
    blockedSince: row.blockedSince?.toISOString() ?? null,
    waitingSince: row.waitingSince?.toISOString() ?? null,
  }))
}

/** The outcome of a skip: what the cursor moved from and to, or why nothing was skipped. */
export interface SkipOutcome {
  outcome: 'skipped' | 'would-skip' | 'not-stuck' | 'not-found'
  /** The cursor's last sequence before, and after (the same when nothing was skipped). */
  from: string | null
  to: string | null
  /** The dead-lettered message skipped (a blocked key), else null. */
  skipped: string | null
}

/** The sequence a skip moves a cursor to: past its blocking message, or up to its first held one. */
function skipTarget(row: {
  lastSeq: string
  blockedSeq: string | null
  firstWaiting: string | null
}): string | null {
  if (row.blockedSeq !== null) return row.blockedSeq
  if (row.firstWaiting !== null && BigInt(row.firstWaiting) > BigInt(row.lastSeq) + 1n)
    return String(BigInt(row.firstWaiting) - 1n)
  return null
}

/**
 * Skips what holds an ordered key back, in one transaction with its record (`ordering.skip`): a
 * blocked key's cursor moves past the dead-lettered message (which stays in the dead-letter
 * queue; requeued later it is a duplicate), a key with a gap moves to just before its first held
 * delivery. The consumers' sweep then handles the held deliveries in order. A dry run locks,
 * reads and says what would change. `{ outcome: 'not-stuck' }` for a key that moves.
 */
export async function skipOrderedKey(
  pool: pg.Pool,
  target: { handler: string; producer: string; key: string; queue: string },
  write: { actor: string; role?: string | undefined; dryRun: boolean },
): Promise<{ actionId: string | null; result: SkipOutcome }> {
  const client = await pool.connect()
  try {
    await client.query(BEGIN)
    const cursor = [target.handler, target.producer, target.key]
    const { rows } = await client.query<{
      lastSeq: string
      blockedBy: string | null
      blockedSeq: string | null
      firstWaiting: string | null
    }>(LOCK_ORDERED_KEY, cursor)
    const row = rows[0]
    const to = row ? skipTarget(row) : null
    const base = { from: row?.lastSeq ?? null, skipped: row?.blockedBy ?? null }
    if (!row || to === null || write.dryRun) {
      await client.query(COMMIT)
      const outcome = !row ? 'not-found' : to === null ? 'not-stuck' : 'would-skip'
      return { actionId: null, result: { ...base, outcome, to: to ?? row?.lastSeq ?? null } }
    }
    await client.query(SKIP_ORDERED_KEY, [...cursor, to])
    const actionId = await recordAdminAction(client, {
      actor: write.actor,
      action: 'ordering.skip',
      target: target.queue,
      ids: base.skipped ? [base.skipped] : [],
      detail: {
        handler: target.handler,
        producer: target.producer,
        key: target.key,
        from: base.from,
        to,
        ...(write.role === undefined ? {} : { role: write.role }),
      },
    })
    await client.query(COMMIT)
    return { actionId, result: { ...base, outcome: 'skipped', to } }
  } catch (error) {
    await client.query(ROLLBACK).catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}
