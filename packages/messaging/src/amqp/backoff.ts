/**
 * Capped exponential backoff with "equal jitter", ms: `min(maxMs, baseMs * 2^attempt)` times a
 * random factor in [0.5, 1], so instances retrying the same failure spread out. `attempt` from 0.
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
