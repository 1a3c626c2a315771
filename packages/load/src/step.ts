import type { HttpClient } from './http.js'
import { describeRun } from './report.js'
import { runOnce, type RunResult } from './run.js'
import type { LoadSettings } from './settings.js'

/** Why a run does not hold its rate, or undefined when it does. */
export function whyNotHeld(run: RunResult, maxP99Ms: number): string | undefined {
  const errors = run.placed - run.accepted
  if (errors > 0) return `${errors} POSTs not accepted`
  if (run.stillPending > 0) return `${run.stillPending} orders still pending after the drain timeout`
  if (!(run.terminalMs.p99 <= maxP99Ms))
    return `p99 POST -> terminal ${Math.round(run.terminalMs.p99)} ms > ${maxP99Ms} ms`
  // Last: the fleet's own reasons first, so a step the fleet failed is not blamed on the client.
  if (run.late > 0) return `the client sent ${run.late} POSTs late`
  return undefined
}

/** The outcome of the step mode: every step run, and the highest rate that held. */
export interface StepResult {
  runs: RunResult[]
  /** The highest rate that held for the step's duration, or undefined when the first did not. */
  highest: number | undefined
  /** Why the first failing step failed. */
  stoppedBecause: string | undefined
}

/**
 * Runs steady steps of `step.seconds` at `from`, `from + by`, ... until one does not hold: every POST
 * accepted, none sent late by the client, every order terminal before the drain timeout, and POST ->
 * terminal p99 within `maxP99Ms` (a backlog that grows during a step shows there first). Each step
 * starts after the previous one drained, so steps do not inherit each other's backlog.
 */
export async function findHighestRate(http: HttpClient, settings: LoadSettings): Promise<StepResult> {
  const { from, by, seconds, maxP99Ms } = settings.step
  const runs: RunResult[] = []
  let highest: number | undefined
  for (let rate = from; ; rate += by) {
    const run = await runOnce(http, settings, rate, seconds)
    runs.push(run)
    console.log(describeRun(run))
    const failed = whyNotHeld(run, maxP99Ms)
    if (failed) {
      console.log(`  -> does not hold: ${failed}`)
      return { runs, highest, stoppedBecause: `${rate}/s: ${failed}` }
    }
    console.log('  -> holds')
    highest = rate
  }
}
