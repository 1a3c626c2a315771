// `npm run test:stress -- [options] [filters...]`: every integration and end-to-end file, run again
// and again with the cores kept busy, and each file's failures (docs/operations.md, "Tests and CI").
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createCli, packageVersion, parse, runCli } from '@saga/cli-kit'
import { startHogs } from './hog.js'
import { integrationFiles, pathOf, planJobs, type Job, type TestFile } from './plan.js'
import { formatResults, resultsByFile } from './report.js'
import { runFile, type RunOutcome } from './run-file.js'

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))

const program = createCli({
  name: 'npm run test:stress --',
  description:
    'Run each integration and end-to-end test file (or those whose path holds a filter) several times, ' +
    'each run a process of its own, some side by side, while low-priority CPU hogs keep every core busy; ' +
    'then print each file with its failed runs and what failed. Exit 1 when any run failed.',
  version: packageVersion(import.meta.url),
})
  .argument('[filters...]', 'keep the files whose path holds one of these, e.g. messaging/test/relay')
  .option('--runs <n>', 'runs of each file', parse.positiveInteger, 5)
  .option('--concurrency <n>', 'files run side by side (npm test runs about two)', parse.positiveInteger, 2)
  .option(
    '--hogs <n>',
    'CPU hogs at nice 19 (0: none)',
    (value) => (value === '0' ? 0 : parse.positiveInteger(value)),
    os.cpus().length,
  )
  .option('--timeout <s>', 'longest one run may take, seconds', parse.positiveInteger, 900)
  .option('--report <file>', 'also write the results as JSON')
  .action(async (filters, options) => {
    const files = integrationFiles(ROOT, filters)
    if (files.length === 0) throw new Error(`no integration or e2e test file matches ${filters.join(', ')}`)
    const jobs = planJobs(files, options.runs)
    const header =
      `${files.length} files x ${options.runs} runs, ${options.concurrency} side by side, ` +
      `${options.hogs} CPU hogs at nice 19 on ${os.cpus().length} cores (Node ${process.version})`
    console.log(header)
    const hogs = startHogs(options.hogs)
    const outcomes: Array<{ file: TestFile; outcome: RunOutcome }> = []
    const started = performance.now()
    try {
      await runAll(jobs, options.concurrency, async (job, index) => {
        const outcome = await runFile(
          ROOT,
          join(ROOT, 'node_modules', '.bin', 'vitest'),
          job.file,
          options.timeout * 1000,
        )
        outcomes.push({ file: job.file, outcome })
        const what = outcome.ok ? 'passed' : `FAILED (${outcome.failures.map((f) => f.test).join('; ')})`
        console.log(
          `[${index + 1}/${jobs.length}] ${pathOf(job.file)} run ${job.run}: ${what} in ${(outcome.ms / 1000).toFixed(1)} s`,
        )
      })
    } finally {
      hogs.stop()
    }
    const results = resultsByFile(files, outcomes)
    const minutes = ((performance.now() - started) / 60_000).toFixed(1)
    console.log(`\n${formatResults(results, `${header}; ${minutes} min`)}`)
    if (options.report) writeFileSync(options.report, `${JSON.stringify(results, null, 2)}\n`)
    if (results.some((r) => r.failed > 0)) process.exitCode = 1
  })

/** Runs `jobs` in order, at most `concurrency` at a time. */
async function runAll(
  jobs: readonly Job[],
  concurrency: number,
  each: (job: Job, index: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++
      await each(jobs[index]!, index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker))
}

await runCli(program)
