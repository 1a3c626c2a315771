import { pathOf, type TestFile } from './plan.js'
import type { Failure, RunOutcome } from './run-file.js'

/** What the runs of one file came to. */
export interface FileResult {
  file: TestFile
  runs: number
  failed: number
  /** Seconds of each run, in the order they ran. */
  seconds: number[]
  /** Each distinct failure with how many runs it came up in. */
  failures: Array<Failure & { times: number }>
}

/** Folds the outcomes of the runs into one result per file, in the order of `files`. */
export function resultsByFile(
  files: readonly TestFile[],
  outcomes: ReadonlyArray<{ file: TestFile; outcome: RunOutcome }>,
): FileResult[] {
  return files.map((file) => {
    const mine = outcomes.filter((o) => pathOf(o.file) === pathOf(file)).map((o) => o.outcome)
    const failures = new Map<string, Failure & { times: number }>()
    for (const f of mine.flatMap((o) => o.failures)) {
      const key = `${f.test}\n${f.error}`
      const seen = failures.get(key)
      if (seen) seen.times += 1
      else failures.set(key, { ...f, times: 1 })
    }
    return {
      file,
      runs: mine.length,
      failed: mine.filter((o) => !o.ok).length,
      seconds: mine.map((o) => Math.round(o.ms / 100) / 10),
      failures: [...failures.values()],
    }
  })
}

/**
 * The closing report: one line per file (`failed/runs`, slowest and median run), the failures of
 * each file that failed under it, and a total line.
 */
export function formatResults(results: readonly FileResult[], header: string): string {
  const width = Math.max(0, ...results.map((r) => pathOf(r.file).length))
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0
  const lines = [header]
  for (const r of results) {
    lines.push(
      `${r.failed === 0 ? 'ok  ' : 'FAIL'}  ${pathOf(r.file).padEnd(width)}  ${r.failed}/${r.runs} failed` +
        `  median ${median(r.seconds)} s, slowest ${Math.max(0, ...r.seconds)} s`,
    )
    for (const f of r.failures) lines.push(`        ${f.times}x ${f.test}: ${f.error}`)
  }
  const runs = results.reduce((n, r) => n + r.runs, 0)
  const failedRuns = results.reduce((n, r) => n + r.failed, 0)
  const failedFiles = results.filter((r) => r.failed > 0).length
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`
  lines.push(
    `${plural(runs, 'run')} of ${plural(results.length, 'file')}: ${failedRuns} failed, in ${plural(failedFiles, 'file')}`,
  )
  return lines.join('\n')
}
