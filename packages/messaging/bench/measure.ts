/** Percentile of already sorted values (nearest rank). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank]!
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 10 ms until true; throws after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`)
    await sleep(10)
  }
}

/**
 * `value` when it lies in [min, max]; else throws, so the bench never prints a figure that cannot
 * be right (a latency measured across two clocks reads as 56 years).
 * @throws Error naming the figure, its value and the range
 */
export function sane(value: number, what: string, min: number, max: number): number {
  if (!Number.isFinite(value) || value < min || value > max)
    throw new Error(
      `bench: refusing to print ${what} = ${value}: outside [${min}, ${max}]; the measurement is broken`,
    )
  return value
}

export const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
