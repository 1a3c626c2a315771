import { createCli, InvalidArgumentError, packageVersion, parse } from '@saga/cli-kit'
import { newSeed } from './random.js'
import { DEFAULT_FAULTS, FAULT_MENU, parseFaultList, type FaultKind } from './schedule.js'

/** A number parser that also checks a range, e.g. `--cancel` between 0 and 1. */
const inRange =
  (ok: (n: number) => boolean, expected: string) =>
  (value: string): number => {
    const n = Number(value)
    if (value.trim() === '' || !Number.isFinite(n) || !ok(n))
      throw new InvalidArgumentError(`expected ${expected}`)
    return n
  }

/** The help line of `--cancel`. */
export const CANCEL_HELP = 'share of orders the customer cancels 0-3 s after placing them'

/** `--rate`: orders per second, above 0 and at most 200 (the soak's and test:cluster's). */
export const parseRate = inRange((n) => n > 0 && n <= 200, 'a number above 0, at most 200')

/** `--cancel`: the share of orders the customer cancels, 0 to 1. */
export const parseShare = inRange((n) => n >= 0 && n <= 1, 'a share from 0 to 1')

/** `--gap 8-20`: the seconds between two faults, as `{ min, max }`. */
function parseGap(value: string): { min: number; max: number } {
  const gap = /^(\d+)-(\d+)$/.exec(value)
  if (!gap || Number(gap[1]) > Number(gap[2]))
    throw new InvalidArgumentError('expected <min>-<max> seconds, e.g. 8-20')
  return { min: Number(gap[1]), max: Number(gap[2]) }
}

/** `--faults default,queue-delete`: the fault kinds, checked against the menu. */
function parseFaults(value: string): FaultKind[] {
  try {
    return parseFaultList(value)
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error))
  }
}

const MENU = FAULT_MENU.map(
  (e) =>
    `  ${e.kind.padEnd(18)} ${e.byDefault ? '' : '(off by default) '}${e.does}` +
    (e.offBecause ? `\n${' '.repeat(21)}off because ${e.offBecause}` : ''),
).join('\n')

/**
 * `npm run soak -- [options]`: the soak's command line on the convention of @saga/cli-kit; every
 * value is parsed and checked here, `soakOptions` makes the run's settings of them.
 */
export function soakProgram() {
  return createCli({
    name: 'npm run soak --',
    description:
      'Start a fleet of its own (databases, exchange and queues named e2e_<random>_*, dropped ' +
      'afterwards), put a steady load with customer cancellations on it while faults fire from the ' +
      'menu below, then check the ledger in SQL and the broker: every order final, each effect once, ' +
      'books balanced, nothing pending, parked or dead-lettered.',
    version: packageVersion(import.meta.url),
  })
    .option(
      '--minutes <n>',
      'length of the load, decimals allowed',
      inRange((n) => n > 0, 'a number above 0'),
      10,
    )
    .option('--rate <n>', 'orders per second', parseRate, 8)
    .option('--cancel <share>', CANCEL_HELP, parseShare, 0.15)
    .option(
      '--seed <n>',
      'replay a run: the same fault schedule and order mix (default: random, printed)',
      (v) => inRange(Number.isSafeInteger, 'a whole number')(v),
    )
    .option(
      '--faults <list>',
      `comma-separated kinds to fire; "default" = ${DEFAULT_FAULTS.join(',')}`,
      parseFaults,
    )
    .option('--gap <min-max>', 'seconds between two faults (default: 8-20)', parseGap)
    .option(
      '--postgres-restart-command <cmd>',
      'the command the postgres-restart fault runs (that fault is off unless listed)',
    )
    .option('--settle <s>', 'how long the fleet may take to settle after the load', parse.positiveNumber, 180)
    .option('--log-level <level>', "the services' LOG_LEVEL", 'warn')
    .option('--report <file>', 'also write the report as JSON')
    .option('--keep-logs', "keep the services' logs (e2e/.runs/<run>) when the soak passed")
    .addHelpText(
      'after',
      `\nThe fault menu (docs/operations.md, "Chaos soak"):\n${MENU}\n\n` +
        'Exit codes: 0 every invariant held; 1 one broke; 2 usage error; 130 a second Ctrl-C.',
    )
}

/** The options `soakProgram` parses. */
export type SoakCliOptions = ReturnType<ReturnType<typeof soakProgram>['opts']>

/** The soak's settings from its parsed options (a random seed when none is given). */
export function soakOptions(options: SoakCliOptions) {
  return {
    durationS: Math.round(options.minutes * 60),
    ratePerS: options.rate,
    cancelShare: options.cancel,
    seed: options.seed ?? newSeed(),
    faults: options.faults ?? [...DEFAULT_FAULTS],
    gapS: options.gap ?? { min: 8, max: 20 },
    postgresRestartCommand: options.postgresRestartCommand,
    settleS: options.settle,
    logLevel: options.logLevel,
    keepLogs: options.keepLogs === true,
    reportFile: options.report,
  }
}
