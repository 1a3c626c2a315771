import type pg from 'pg'
import { reportBackgroundFailure } from '../database-errors.js'
import { deleteExpiredInbox } from '../outbox/retention.js'
import type { Logger } from '../types.js'

/** Options of `createInboxRetention`; durations in ms. */
export interface InboxRetentionOptions {
  pool: pg.Pool
  logger?: Logger | undefined
  /** How often a pass runs; 0 turns it off. */
  intervalMs: number
  /** Inbox rows older than this are deleted. Default `DEFAULT_INBOX_RETENTION_MS` (7 days). */
  inboxRetentionMs?: number | undefined
}

/** The inbox's retention on a timer of its own; see `createInboxRetention`. */
export interface InboxRetention {
  /** Starts the timer (the first pass runs after one interval). */
  start(): void
  /** Stops the timer and waits for a pass in flight. Idempotent. */
  stop(): Promise<void>
  /** Runs one pass now; resolves with the rows deleted. */
  runRetention(): Promise<number>
}

/**
 * Inbox retention for a process that consumes without a relay: every `intervalMs` deletes inbox
 * rows older than `inboxRetentionMs`, one pass at a time; a failed pass is reported
 * (`reportBackgroundFailure`) and the next tries again.
 */
export function createInboxRetention(options: InboxRetentionOptions): InboxRetention {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<number> | undefined
  const runRetention = (): Promise<number> =>
    deleteExpiredInbox(options.pool, { inboxRetentionMs: options.inboxRetentionMs })

  return {
    start() {
      if (timer || options.intervalMs <= 0) return
      timer = setInterval(() => {
        if (running) return
        running = runRetention()
        running
          .catch((error: unknown) => reportBackgroundFailure(options.logger, error, 'inbox retention'))
          .finally(() => (running = undefined))
          .catch(() => undefined)
      }, options.intervalMs)
    },
    async stop() {
      clearInterval(timer)
      timer = undefined
      await running?.catch(() => undefined)
    },
    runRetention,
  }
}
