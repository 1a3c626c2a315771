// `npm run soak [-- options]`: a chaos soak of a fleet of its own (soak.ts); exits 0 when every
// invariant held, 1 when one broke, 2 on bad options.
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import { newSeed } from './random.js'
import { formatReport } from './report.js'
import { DEFAULT_FAULTS, FAULT_MENU, parseFaultList } from './schedule.js'
import { runSoak } from './soak.js'

const usage = `Usage: npm run soak -- [options]

Starts a fleet of its own (databases, exchange and queues named e2e_<random>_*, dropped afterwards),
puts a steady load with customer cancellations on it while faults fire from the menu below, then
checks the ledger in SQL and the broker: every order final, each effect once, books balanced,
nothing pending, parked or dead-lettered. Exit code 0 when all held, 1 when not.

  --minutes <n>        length of the load (default 10; decimals allowed)
  --rate <n>           orders per second (default 8)
  --cancel <share>     share of orders the customer cancels 0-3 s after placing them (default 0.15)
  --seed <n>           replay a run: the same fault schedule and order mix (default: random, printed)
  --faults <list>      comma-separated kinds to fire; "default" = ${DEFAULT_FAULTS.join(',')}
  --gap <min-max>      seconds between two faults (default 8-20)
  --postgres-restart-command <cmd>
                       the command the postgres-restart fault runs (that fault is off unless listed)
  --settle <s>         how long the fleet may take to settle after the load (default 180)
  --log-level <level>  the services' LOG_LEVEL (default warn)
  --report <file>      also write the report as JSON
  --keep-logs          keep the services' logs (e2e/.runs/<run>) when the soak passed
  --help               print this

The fault menu (docs/operations.md, "Chaos soak"):
${FAULT_MENU.map((e) => `  ${e.kind.padEnd(18)} ${e.byDefault ? '' : '(off by default) '}${e.does}${e.offBecause ? `\n${' '.repeat(21)}off because ${e.offBecause}` : ''}`).join('\n')}`

function options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      rate: { type: 'string', default: '8' },
      cancel: { type: 'string', default: '0.15' },
      seed: { type: 'string' },
      faults: { type: 'string', default: 'default' },
      gap: { type: 'string', default: '8-20' },
      'postgres-restart-command': { type: 'string' },
      settle: { type: 'string', default: '180' },
      'log-level': { type: 'string', default: 'warn' },
      report: { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    console.log(usage)
    process.exit(0)
  }
  const number = (name: string, text: string, ok: (n: number) => boolean): number => {
    const n = Number(text)
    if (!Number.isFinite(n) || !ok(n)) throw new Error(`--${name} ${JSON.stringify(text)} is out of range`)
    return n
  }
  const gap = /^(\d+)-(\d+)$/.exec(values.gap)
  if (!gap || Number(gap[1]) > Number(gap[2]))
    throw new Error(`--gap ${JSON.stringify(values.gap)} is not <min>-<max> seconds`)
  return {
    durationS: Math.round(number('minutes', values.minutes, (n) => n > 0) * 60),
    ratePerS: number('rate', values.rate, (n) => n > 0 && n <= 200),
    cancelShare: number('cancel', values.cancel, (n) => n >= 0 && n <= 1),
    seed: values.seed === undefined ? newSeed() : number('seed', values.seed, Number.isSafeInteger),
    faults: parseFaultList(values.faults),
    gapS: { min: Number(gap[1]), max: Number(gap[2]) },
    postgresRestartCommand: values['postgres-restart-command'],
    settleS: number('settle', values.settle, (n) => n > 0),
    logLevel: values['log-level'],
    keepLogs: values['keep-logs'],
    reportFile: values.report,
  }
}

let parsed: ReturnType<typeof options>
try {
  parsed = options()
} catch (error) {
  console.error(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`)
  process.exit(2)
}
const { reportFile, ...soak } = parsed
// Ctrl-C once: end the load and the faults now, then judge and tear down as usual; twice: exit at
// once (the service processes are killed; the run's databases e2e_<id>_* and queues stay).
const interrupt = new AbortController()
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130)
  console.log(
    '[soak] interrupted: ending the load and the faults, then judging (Ctrl-C again to exit at once)',
  )
  interrupt.abort()
})
const report = await runSoak({
  ...soak,
  signal: interrupt.signal,
  say: (line) => console.log(`[soak] ${line}`),
})
console.log(`\n${formatReport(report)}`)
if (reportFile) fs.writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`)
process.exit(report.ok ? 0 : 1)
