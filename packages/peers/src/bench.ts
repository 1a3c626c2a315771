import { createHttpClient } from '@saga/load/dist/http.js'
import type { Contestant } from './contestants.js'
import { dropDatabases } from './databases.js'
import type { Verdict } from './invariants.js'
import { measureStep, type Step } from './measure.js'
import { createTreeMeter } from './procs.js'

/** What `runBench` needs. */
export interface BenchOptions {
  contestants: Contestant[]
  rounds: number
  /** Seconds of placing per rate step. */
  seconds: number
  /** Seconds at 25/s before the ladder, left out of the figures (JIT, pools, caches); 0 = none. */
  warmupSeconds: number
  /** The highest rate tried (orders/s); the ladder is 50, 100, 150 ... */
  maxRate: number
  /** Admin PostgreSQL URL (creates and drops the run's databases). */
  postgresUrl: string
  /** Prefix of every database of this run (unique per run). */
  runId: string
  drainTimeoutMs: number
  log: (line: string) => void
}

// The stop of every contestant running now, for `stopRunning` (an interrupted run).
const running = new Set<() => Promise<void>>()

/** Stops every contestant still running (their processes, their databases): for SIGINT and SIGTERM. */
export async function stopRunning(): Promise<void> {
  await Promise.allSettled([...running].map((stop) => stop()))
}

/** One contestant in one round. */
export interface RoundResult {
  contestant: string
  round: number
  steps: Step[]
  /** Highest rate of the ladder that held (0 when 50/s did not). */
  held: number
  /** Why the first failing step failed (undefined when the whole ladder held). */
  stoppedBecause: string | undefined
  /** Most resident memory of its processes at one sample, MiB. */
  peakRssMiB: number
  /** The invariants over everything the round placed; `error` when the round could not run. */
  verdict: Verdict | { error: string }
}

/**
 * One contestant's round: starts it, warms it up, runs the rate ladder (50/s and 100/s always, then +50/s while
 * each step holds, up to `maxRate`), checks the invariants, and stops it (its databases dropped).
 */
async function runRound(options: BenchOptions, contestant: Contestant, round: number): Promise<RoundResult> {
  const result: RoundResult = {
    contestant: contestant.name,
    round,
    steps: [],
    held: 0,
    stoppedBecause: undefined,
    peakRssMiB: 0,
    verdict: { error: 'not run' },
  }
  const http = createHttpClient(256)
  const prefix = `${options.runId}r${round}_`
  try {
    const target = await contestant.start(prefix, options.postgresUrl)
    const stop = () => target.stop()
    running.add(stop)
    try {
      const meter = createTreeMeter(target.roots)
      let firstOrder = 0
      if (options.warmupSeconds > 0) {
        const warm = await measureStep({
          ...options,
          http,
          target,
          meter,
          rate: 25,
          seconds: options.warmupSeconds,
          firstOrder,
        })
        firstOrder += warm.accepted + warm.refused
      }
      for (let rate = 50; rate <= options.maxRate; rate += 50) {
        const step = await measureStep({ ...options, http, target, meter, rate, firstOrder })
        firstOrder += step.accepted + step.refused
        result.steps.push(step)
        options.log(
          `${contestant.name} round ${round} ${rate}/s: p50 ${Math.round(step.p50)} ms, p99 ${Math.round(step.p99)} ms, ` +
            `${step.completedPerSecond.toFixed(1)} completed/s, CPU ${step.cpuMsPerSaga.toFixed(1)} ms/saga` +
            `${step.notHeld ? ` -> does not hold: ${step.notHeld}` : ''}`,
        )
        if (step.notHeld) result.stoppedBecause ??= `${rate}/s: ${step.notHeld}`
        else if (!result.stoppedBecause) result.held = rate
        if (result.stoppedBecause && rate >= 100) break
      }
      result.peakRssMiB = meter.peakRss / 2 ** 20
      result.verdict = await target.check()
      options.log(`${contestant.name} round ${round} invariants: ${describeVerdict(result.verdict)}`)
    } finally {
      running.delete(stop)
      await stop()
    }
  } catch (error) {
    result.verdict = { error: error instanceof Error ? error.message : String(error) }
    options.log(`${contestant.name} round ${round} failed: ${result.verdict.error}`)
  } finally {
    http.close()
  }
  return result
}

/** The verdict as one line: `hold (…outcomes)` or the broken rules. */
export function describeVerdict(verdict: RoundResult['verdict']): string {
  if ('error' in verdict) return `not checked (${verdict.error.split('\n')[0]})`
  const outcomes = Object.entries(verdict.outcomes)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
  return verdict.ok ? `hold (${outcomes})` : `BROKEN: ${verdict.problems.join('; ')}`
}

/**
 * Runs every contestant once per round, alternating (A B C D A B C D ...), each on databases of its
 * own named `<runId>r<round>_...`, and drops whatever of the run is left at the end.
 */
export async function runBench(options: BenchOptions): Promise<RoundResult[]> {
  const results: RoundResult[] = []
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      for (const contestant of options.contestants) results.push(await runRound(options, contestant, round))
    }
  } finally {
    await dropDatabases(options.postgresUrl, options.runId).catch(() => undefined)
  }
  return results
}
