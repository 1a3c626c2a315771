/**
 * Capped exponential backoff with jitter, ms: `min(maxMs, baseMs * 2^attempt)` scaled by a random
 * factor in [0.5, 1] ("equal jitter", https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/),
 * so many instances retrying the same failure spread out instead of retrying in lockstep.
 * `attempt` counts from 0.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exponential = baseMs * 2 ** Math.min(Math.max(attempt, 0), 30)
  const capped = Math.min(maxMs, exponential)
  return Math.round(capped / 2 + (capped / 2) * random())
}
