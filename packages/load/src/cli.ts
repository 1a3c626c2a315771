// `npm run load -- [options]`: load against a running fleet; settings.ts has the options (`--help`).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { runCli } from '@saga/cli-kit'
import { describeFloor, runFloor } from './floor.js'
import { createHttpClient } from './http.js'
import { describeOverload, describeRun, machineLine, overloadFailures, runsTable } from './report.js'
import { runOnce, type RunResult } from './run.js'
import { loadProgram, loadSettings, type LoadSettings } from './settings.js'
import { findHighestRate } from './step.js'

const DOCS = fileURLToPath(new URL('../../../docs/performance.md', import.meta.url))
const BEGIN = '<!-- load-results:begin (written by `npm run load -- --docs`; edits here are overwritten) -->'
const END = '<!-- load-results:end -->'

/**
 * Replaces the results section of docs/performance.md (between the markers), or appends it, and
 * formats the file with the repository's prettier settings so `prettier --check` stays clean.
 */
async function writeDocs(section: string): Promise<void> {
  const current = existsSync(DOCS) ? readFileSync(DOCS, 'utf8') : '# Performance\n'
  const start = current.indexOf(BEGIN)
  const end = current.indexOf(END)
  const block = `${BEGIN}\n${section}\n${END}`
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${block}${current.slice(end + END.length)}`
      : `${current.trimEnd()}\n\n${block}\n`
  const prettier = await import('prettier')
  const options = (await prettier.resolveConfig(DOCS)) ?? {}
  writeFileSync(DOCS, await prettier.format(next, { ...options, filepath: DOCS }))
  console.log(`wrote ${DOCS}`)
}

async function documentedSet(http: ReturnType<typeof createHttpClient>, settings: LoadSettings) {
  const machine = machineLine()
  const steady: RunResult[] = []
  for (const [rate, seconds] of [
    [20, 20],
    [50, 30],
  ] as const) {
    const run = await runOnce(http, settings, rate, seconds)
    console.log(describeRun(run))
    steady.push(run)
  }
  const step = await findHighestRate(http, settings)
  const { from, by, seconds, maxP99Ms } = settings.step
  await writeDocs(
    [
      `Machine: ${machine}.`,
      '',
      '`npm run load -- --docs`: steady runs, then the step mode ' +
        `(from ${from}/s by ${by}/s, ${seconds} s per step; a step holds while every POST is accepted and ` +
        `POST → terminal p99 stays under ${maxP99Ms} ms).`,
      '',
      runsTable(steady),
      '',
      `Step mode: highest rate that held for ${seconds} s: **${step.highest ?? 'none'} orders/s**` +
        `${step.stoppedBecause ? ` (stopped at ${step.stoppedBecause})` : ''}.`,
      '',
      runsTable(step.runs),
    ].join('\n'),
  )
}

/** Runs the mode the options name and prints its report; sets exit code 1 for a failed overload verdict. */
async function run(settings: LoadSettings): Promise<void> {
  const http = createHttpClient(settings.maxInFlight)
  try {
    console.log(`machine: ${machineLine()}`)
    if (settings.mode === 'floor') {
      if (!settings.postgresUrl) throw new Error('--floor needs POSTGRES_URL (it creates its own database)')
      const { rate, seconds, postgresUrl, amqpUrl, drainTimeoutMs } = settings
      console.log(describeFloor(await runFloor({ rate, seconds, postgresUrl, amqpUrl, drainTimeoutMs })))
    } else if (settings.mode === 'docs') await documentedSet(http, settings)
    else if (settings.mode === 'step') {
      const step = await findHighestRate(http, settings)
      console.log(`highest rate that held for ${settings.step.seconds} s: ${step.highest ?? 'none'} orders/s`)
    } else if (settings.mode === 'overload') {
      const result = await runOnce(http, settings, settings.rate, settings.seconds)
      console.log(describeOverload(result, settings.acceptP99Ms))
      if (overloadFailures(result, settings.acceptP99Ms).length > 0) process.exitCode = 1
    } else console.log(describeRun(await runOnce(http, settings, settings.rate, settings.seconds)))
  } finally {
    http.close()
  }
}

await runCli(loadProgram().action((options) => run(loadSettings(options, process.env))))
