import { setTimeout as sleep } from 'node:timers/promises'
import { backoffDelay } from '../amqp/backoff.js'

/** How a handler that throws is retried. All durations in milliseconds. */
export interface RetryPolicy {
  /** Attempts in all, the first included; after the last failure the message is dead-lettered. */
  maxAttempts: number
  /** Delay before the second attempt, ms (the upper end; equal jitter takes 50-100 % of it). Doubles per attempt. */
  baseMs: number
  /** Cap of the delay, ms. */
  maxMs: number
  /**
   * How long a message may fail for transient database reasons (`isTransientDatabaseError`) without
   * spending attempts, ms, from its first such failure; past it they count, so a handler that always
   * deadlocks is dead-lettered in the end.
   */
  transientMaxMs: number
}

/**
 * The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed: `backoffDelay`,
 * so retries of many messages failing together spread out. Base 500, max 60,000: after attempt 1
 * 250..500 ms, after attempt 4 2..4 s.
 */
export const retryDelayMs = (
  attempt: number,
  policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>,
  random: () => number = Math.random,
): number => backoffDelay(attempt - 1, policy.baseMs, policy.maxMs, random)

/** Whether a failed attempt is retried or the message has used up its attempts. */
export const afterFailure = (
  attempt: number,
  policy: Pick<RetryPolicy, 'maxAttempts'>,
): 'retry' | 'dead-letter' => (attempt < policy.maxAttempts ? 'retry' : 'dead-letter')

/**
 * Waits out a retry delay: resolves true after `ms`, or false at once when `stopping` aborts first
 * (the channel went or the consumer stops: the caller gives up and leaves the delivery unacked).
 */
export const pause = (ms: number, stopping: AbortSignal): Promise<boolean> =>
  sleep(ms, true, { signal: stopping }).catch(() => false)
