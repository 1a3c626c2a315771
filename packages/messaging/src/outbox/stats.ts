import type pg from 'pg'
import { PARKED_COUNT, PENDING_STATS } from '../sql.js'
import { boundedQuery, HOUSEKEEPING_BOUNDS } from './bounded-query.js'

/** Relay figures for metrics and readiness. */
export interface RelayStats {
  /** Rows waiting to be published (not published, not parked), as of the last refresh. */
  pending: number
  /** Age of the oldest pending row (now - occurred_at), ms; 0 when none. */
  oldestPendingAgeMs: number
  /** Rows parked (attempts run out, or refused by the broker), as of the last parked refresh. */
  parked: number
  /** Rows this relay published since start. */
  publishedTotal: number
  /** Failed publish attempts by this relay since start (a row retried 3 times counts 3). */
  failedTotal: number
  /** Rows this relay parked since start. */
  parkedTotal: number
  /**
   * Rows the broker refused for themselves since start (a 406 on basic.publish, e.g. over its
   * `max_message_size`); each was parked at once, so each is in `parkedTotal` too.
   */
  refusedTotal: number
  /** When the pending figures were read (epoch ms); 0 before the first read. */
  refreshedAt: number
  /** When the pending figures were read (`performance.now()`, ms): their age without a wall clock. */
  refreshedAtMono?: number
}

/** A relay's figures before its first read: every count 0, never refreshed. */
export function idleRelayStats(): RelayStats {
  return {
    pending: 0,
    oldestPendingAgeMs: 0,
    parked: 0,
    publishedTotal: 0,
    failedTotal: 0,
    parkedTotal: 0,
    refusedTotal: 0,
    refreshedAt: 0,
  }
}

/**
 * Pending count and oldest age (the database's `now()` against a time it wrote), through the pending
 * partial index, within `HOUSEKEEPING_BOUNDS`.
 */
export async function readPending(pool: pg.Pool): Promise<{ pending: number; oldestPendingAgeMs: number }> {
  const { rows } = await boundedQuery<{ pending: number; oldest_ms: number | null }>(
    pool,
    PENDING_STATS,
    HOUSEKEEPING_BOUNDS,
  )
  const row = rows[0]
  return { pending: row?.pending ?? 0, oldestPendingAgeMs: Math.max(0, Math.round(row?.oldest_ms ?? 0)) }
}

/**
 * Parked count. No index covers `failed_at`, so this scans the table: the relay reads it less
 * often than the pending figures (retention keeps the table small).
 */
export async function readParked(pool: pg.Pool): Promise<number> {
  const { rows } = await boundedQuery<{ parked: number }>(pool, PARKED_COUNT, HOUSEKEEPING_BOUNDS)
  return rows[0]?.parked ?? 0
}
