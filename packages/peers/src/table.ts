import { describeVerdict, type RoundResult } from './bench.js'

/** `median (min–max)` of `values` with `digits` decimals; `n/a` for none; the median alone for one. */
export function spread(values: number[], digits = 0): string {
  const xs = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (xs.length === 0) return 'n/a'
  const mid = xs.length % 2 ? xs[(xs.length - 1) / 2]! : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2
  const f = (n: number) => n.toFixed(digits)
  return xs.length === 1 ? f(mid) : `${f(mid)} (${f(xs[0]!)}–${f(xs.at(-1)!)})`
}

const at = (r: RoundResult, rate: number) => r.steps.find((s) => s.rate === rate)

/** The invariants' cell: how many rounds hold, and the first problem of any that does not. */
function verdicts(rounds: RoundResult[]): string {
  const holding = rounds.filter((r) => !('error' in r.verdict) && r.verdict.ok).length
  const bad = rounds.find((r) => 'error' in r.verdict || !r.verdict.ok)
  return `${holding}/${rounds.length} hold${bad ? `; round ${bad.round}: ${describeVerdict(bad.verdict)}` : ''}`
}

/**
 * The comparison as a markdown table, one row per contestant, each cell the median and (with
 * several rounds) the spread over its rounds: held sagas/s, p50/p99 POST -> final at 50/s and
 * 100/s (ms), CPU ms per saga at 50/s and 100/s, peak memory (MiB), how busy the whole machine was
 * during its steps (%, the contestant itself included), invariants.
 */
export function comparisonTable(results: readonly RoundResult[]): string {
  const names = [...new Set(results.map((r) => r.contestant))]
  const lines = [
    '| | held sagas/s | p50 at 50/s (ms) | p99 at 50/s (ms) | p50 at 100/s (ms) | p99 at 100/s (ms) | CPU ms/saga at 50/s | CPU ms/saga at 100/s | peak memory (MiB) | machine busy (%) | invariants |',
    '| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --- |',
  ]
  for (const name of names) {
    const rounds = results.filter((r) => r.contestant === name)
    const ran = rounds.filter((r) => r.steps.length > 0)
    const col = (rate: number, pick: (s: NonNullable<ReturnType<typeof at>>) => number, digits = 0) =>
      spread(
        ran
          .map((r) => at(r, rate))
          .filter((s) => s !== undefined)
          .map(pick),
        digits,
      )
    const held = ran.every((r) => r.held === 0) && ran.length > 0 ? '< 50' : spread(ran.map((r) => r.held))
    const busy = spread(ran.flatMap((r) => r.steps.map((s) => s.machineBusy * 100)))
    lines.push(
      `| ${name} | ${held} | ${col(50, (s) => s.p50)} | ${col(50, (s) => s.p99)} | ` +
        `${col(100, (s) => s.p50)} | ${col(100, (s) => s.p99)} | ${col(50, (s) => s.cpuMsPerSaga, 1)} | ` +
        `${col(100, (s) => s.cpuMsPerSaga, 1)} | ${spread(ran.map((r) => r.peakRssMiB))} | ${busy} | ${verdicts(rounds)} |`,
    )
  }
  return lines.join('\n')
}
