import type pg from 'pg'
import { reportBackgroundFailure } from '../database-errors.js'
import type { Logger } from '../types.js'
import { deleteExpired, vacuumOutbox, type RetentionOptions, type RetentionResult } from './retention.js'
import { readParked, readPending, type RelayStats } from './stats.js'

/** What the relay's housekeeping needs; durations in ms (see `RelayOptions`). */
export interface HousekeepingOptions {
  pool: pg.Pool
  logger?: Logger | undefined
  /** The relay's figures, updated in place (pending, oldest age, parked, refreshedAt). */
  stats: RelayStats
  statsIntervalMs: number
  /** 0 turns retention off. */
  retentionIntervalMs: number
  retention: Pick<RetentionOptions, 'retentionMs' | 'inboxRetentionMs'>
  /** VACUUM after this many rows were marked or deleted; 0 never. */
  vacuumAfterRows: number
}

/** Stats refresh, retention and VACUUM on timers, apart from the publish loop. */
export interface Housekeeping {
  /** Starts the timers and reads the stats once. */
  start(): void
  /** Stops the timers and waits for a refresh or retention pass in flight. */
  stop(): Promise<void>
  /** Reads pending count and oldest age now (and the parked count every few reads). */
  refreshStats(): Promise<RelayStats>
  /** Deletes expired rows now, then VACUUMs when enough rows changed. */
  runRetention(): Promise<RetentionResult>
  /** Counts rows the publish loop marked, towards the next VACUUM. */
  noteChanged(rows: number): void
  /** Reads the stats soon (one read at a time): the publish loop changed the outbox and went idle. */
  refreshSoon(): void
}

// The parked count scans the table (no index covers failed_at), so it is read every 10th time;
// this relay's own parks are counted at once (see relay.ts).
const PARKED_EVERY = 10
const SOON_MIN_GAP_MS = 250

/** Creates the housekeeping of one relay; see `Housekeeping`. */
export function createHousekeeping(options: HousekeepingOptions): Housekeeping {
  const { pool, stats: current, logger: log } = options
  const background = new Set<Promise<unknown>>()
  let changedSinceVacuum = 0
  let statsRound = 0
  let statsTimer: NodeJS.Timeout | undefined
  let retentionTimer: NodeJS.Timeout | undefined

  const track = <T>(promise: Promise<T>): Promise<T> => {
    background.add(promise)
    void promise.finally(() => background.delete(promise)).catch(() => undefined)
    return promise
  }

  let refreshing: Promise<unknown> | undefined
  const refreshStats = async (): Promise<RelayStats> => {
    const pending = await readPending(pool)
    Object.assign(current, pending, { refreshedAt: Date.now(), refreshedAtMono: performance.now() })
    if (statsRound++ % PARKED_EVERY === 0) current.parked = await readParked(pool)
    return { ...current }
  }
  const refreshInBackground = (): Promise<unknown> =>
    track(refreshStats()).catch((error: unknown) => reportBackgroundFailure(log, error, 'outbox stats read'))

  const runRetention = async (): Promise<RetentionResult> => {
    const result = await deleteExpired(pool, options.retention)
    changedSinceVacuum += result.outbox
    if (options.vacuumAfterRows > 0 && changedSinceVacuum >= options.vacuumAfterRows) {
      changedSinceVacuum = 0
      await vacuumOutbox(pool)
    }
    return result
  }

  return {
    start() {
      statsTimer = setInterval(() => void refreshInBackground(), options.statsIntervalMs)
      if (options.retentionIntervalMs > 0) {
        retentionTimer = setInterval(() => {
          if (background.size > 2) return
          track(runRetention()).catch((error: unknown) =>
            reportBackgroundFailure(log, error, 'outbox retention'),
          )
        }, options.retentionIntervalMs)
      }
      void refreshInBackground()
    },
    async stop() {
      clearInterval(statsTimer)
      clearInterval(retentionTimer)
      await Promise.allSettled([...background])
    },
    refreshStats,
    runRetention,
    noteChanged(rows) {
      changedSinceVacuum += rows
    },
    refreshSoon() {
      // Only for a backlog that may be gone, at most every 250 ms: under steady load the loop goes
      // idle after nearly every batch, and a count per batch would load the publish path's database.
      const sinceRead = performance.now() - (current.refreshedAtMono ?? -Infinity)
      if (refreshing || current.pending === 0 || sinceRead < SOON_MIN_GAP_MS) return
      refreshing = refreshInBackground().finally(() => (refreshing = undefined))
    },
  }
}
