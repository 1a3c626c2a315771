/** How a handler that throws is retried. All durations in milliseconds. */
export interface RetryPolicy {
  /** Attempts in all, the first included; after the last failure the message is dead-lettered. */
  maxAttempts: number
  /** Delay before the second attempt, ms. Doubles per attempt. */
  baseMs: number
  /** Cap of the delay, ms. */
  maxMs: number
}

/**
 * The delay before attempt `attempt + 1` after attempt `attempt` failed: capped exponential backoff
 * with "equal jitter" (half fixed, half random; https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/),
 * so retries of many messages failing together spread out yet never come sooner than half the step.
 * Example with base 200 and max 30,000: attempt 1 -> 100..200 ms, attempt 4 -> 800..1,600 ms.
 */
export function retryDelayMs(
  attempt: number,
  policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>,
  random = Math.random,
): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1))
  return Math.round(step / 2 + random() * (step / 2))
}

/** Whether a failed attempt is retried or the message has used up its attempts. */
export const afterFailure = (
  attempt: number,
  policy: Pick<RetryPolicy, 'maxAttempts'>,
): 'retry' | 'dead-letter' => (attempt < policy.maxAttempts ? 'retry' : 'dead-letter')
