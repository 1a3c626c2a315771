/** Latency summary in milliseconds. */
export interface LatencySummary {
  count: number
  p50: number
  p99: number
  max: number
}

/** Nearest-rank percentile (https://en.wikipedia.org/wiki/Percentile#The_nearest-rank_method). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length))
  return sorted[Math.min(rank, sorted.length) - 1] ?? Number.NaN
}

/** p50, p99 and max of `samples` (ms). */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  }
}

/** Prints one scenario's time-to-terminal line; the suite reports times, it never asserts them. */
export function reportLatency(scenario: string, samples: readonly number[], extra = ''): LatencySummary {
  const s = summarize(samples)
  const line = `[e2e] ${scenario}: time-to-terminal over ${s.count} orders: p50 ${s.p50} ms, p99 ${s.p99} ms, max ${s.max} ms${extra ? `; ${extra}` : ''}`
  process.stdout.write(`${line}\n`)
  return s
}
