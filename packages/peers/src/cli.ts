// `npm run bench:peers -- [options]`: the order saga on DBOS, Restate, pg-boss and the fleet under
// the same load, alternating, and one table of the results (README.md).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { createCli, packageVersion, parse, runCli } from '@saga/cli-kit'
import { machineLine } from '@saga/load/dist/report.js'
import { runBench, stopRunning } from './bench.js'
import { dropDatabases } from './databases.js'
import { PEERS, type Contestant } from './contestants.js'
import { fleet } from './fleet.js'
import { comparisonTable } from './table.js'

const DOCS = fileURLToPath(new URL('../../../docs/performance.md', import.meta.url))
const BEGIN = '<!-- peers:begin -->'
const END = '<!-- peers:end -->'
const HEADING = '## Side by side: DBOS, Restate, pg-boss'

/**
 * Writes `section` between the peers markers of docs/performance.md; when the markers are absent,
 * adds them with their heading before the page's first section. Formats with the repository's prettier settings.
 */
async function writeDocs(section: string): Promise<void> {
  const current = existsSync(DOCS) ? readFileSync(DOCS, 'utf8') : '# Performance\n'
  const start = current.indexOf(BEGIN)
  const end = current.indexOf(END)
  const block = `${BEGIN}\n\n${section}\n\n${END}`
  let next: string
  if (start >= 0 && end > start) next = `${current.slice(0, start)}${block}${current.slice(end + END.length)}`
  else {
    // Before the first section after the title (its introduction stays first), or at the end.
    const section = current.indexOf('\n## ')
    const at = section >= 0 ? section + 1 : current.length
    next = `${current.slice(0, at).trimEnd()}\n\n${HEADING}\n\n${block}\n\n${current.slice(at)}`
  }
  const prettier = await import('prettier')
  const options = (await prettier.resolveConfig(DOCS)) ?? {}
  writeFileSync(DOCS, await prettier.format(next, { ...options, filepath: DOCS }))
  console.log(`wrote ${DOCS}`)
}

/** Everything a round runs, in its order (A B C D). */
const CONTESTANTS: Record<string, Contestant> = { ...PEERS, fleet }

const program = createCli({
  name: 'npm run bench:peers --',
  description:
    'Run the order saga on DBOS, Restate, pg-boss and this fleet one after another (A B C D A B C D ...) ' +
    'under the same load and failure mix, check every run against the same invariants, and print one table.',
  version: packageVersion(import.meta.url),
})
  .option('--rounds <n>', 'rounds (each runs every contestant once)', parse.positiveInteger, 3)
  .option('--seconds <n>', 'seconds of placing per rate step', parse.positiveNumber, 20)
  .option(
    '--max-rate <n>',
    'highest rate of the ladder 50, 100, 150 ... (orders/s)',
    parse.positiveInteger,
    300,
  )
  .option('--only <names>', `comma-separated subset of ${Object.keys(CONTESTANTS).join(',')}`)
  .option(
    '--warmup <s>',
    'seconds at 25/s before the measured steps (not in the figures)',
    parse.positiveNumber,
    10,
  )
  .option('--quick', 'a short look: 1 round, 5 s per step, 50/s and 100/s only, 3 s of warm-up')
  .option(
    '--drain-timeout <s>',
    'seconds to wait after a step for its orders to finish',
    parse.positiveNumber,
    30,
  )
  .option('--docs', 'write the table between the peers markers of docs/performance.md')

await runCli(
  program.action(async (options) => {
    const quick = options.quick === true
    const names = options.only ? options.only.split(',') : Object.keys(CONTESTANTS)
    const unknown = names.filter((n) => !(n in CONTESTANTS))
    if (unknown.length) throw new Error(`unknown contestant(s) ${unknown.join(', ')}`)
    const machine = machineLine()
    console.log(`machine: ${machine}`)
    const settings = {
      rounds: quick ? 1 : options.rounds,
      seconds: quick ? 5 : options.seconds,
      maxRate: quick ? 100 : options.maxRate,
      warmupSeconds: quick ? 3 : options.warmup,
    }
    const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
    const runId = `peers_${Date.now().toString(36)}_`
    // Interrupted: stop what runs and drop the run's databases before exiting.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        console.error(`[bench:peers] ${signal}: stopping the contestants and dropping ${runId}* databases`)
        void stopRunning()
          .then(() => dropDatabases(postgresUrl, runId))
          .finally(() => process.exit(130))
      })
    }
    const results = await runBench({
      ...settings,
      contestants: names.map((n) => CONTESTANTS[n]!),
      postgresUrl,
      runId,
      drainTimeoutMs: options.drainTimeout * 1_000,
      log: (line) => console.error(`[bench:peers] ${line}`),
    })
    const table = comparisonTable(results)
    console.log(`\n${table}`)
    if (options.docs) {
      await writeDocs(
        [
          `Machine: ${machine}.`,
          '',
          `\`npm run bench:peers${quick ? ' -- --quick' : ''}\`: ${settings.rounds} round(s), contestants alternating; ` +
            `${settings.warmupSeconds} s at 25/s to warm up, then steps of ${settings.seconds} s at 50, 100 ... ${settings.maxRate} orders/s (1 in 20 declined, 1 in 20 out of ` +
            'stock, 1 in 20 to an unsupported country); a step holds while every POST is accepted, POST → final p99 ≤ 1 s ' +
            'and no backlog grows (never more than 2 s of orders in flight; held `< 50`: not even 50/s held). Cells: median (min–max) over the rounds. CPU: every process of the contestant, ' +
            'its PostgreSQL backends and (the fleet) RabbitMQ, from /proc. Memory: resident, its own processes ' +
            '(not PostgreSQL or RabbitMQ). Machine busy: the whole machine during its steps, itself included; ' +
            'well above its own share, other load ran too' +
            `${quick ? ' (a --quick look, one round of short steps: not a reference figure)' : ''}. ` +
            'packages/peers/README.md says what each one guarantees.',
          '',
          table,
        ].join('\n'),
      )
    }
    if (results.some((r) => 'error' in r.verdict || !r.verdict.ok)) process.exitCode = 1
  }),
)
