import { createCli, Option, packageVersion, parse } from '@saga/cli-kit'

/** The four services, in chain order, and their `npm start` ports. */
const SERVICES = { order: 3001, payment: 3002, inventory: 3003, shipment: 3004 } as const

/** What a load run needs to know; see `loadSettings` for where each value comes from. */
export interface LoadSettings {
  mode: 'steady' | 'step' | 'docs' | 'overload' | 'floor'
  /** Orders per second (steady mode); in overload mode twice the `--rate` given (the sustainable one). */
  rate: number
  /** Seconds of placing (steady mode). */
  seconds: number
  /** Overload mode: the accept p99 (POST -> 201) the service must keep while it sheds the rest, ms. */
  acceptP99Ms: number
  /** Step mode: first rate, increment, seconds per step, and the p99 POST -> terminal a step must keep, ms. */
  step: { from: number; by: number; seconds: number; maxP99Ms: number }
  /** Base URL per service, e.g. `{ order: 'http://127.0.0.1:3001', ... }`. */
  services: Record<keyof typeof SERVICES, string>
  /** Admin PostgreSQL URL for pg_stat_activity (the fleet's backends' pids); undefined = not measured. */
  postgresUrl: string | undefined
  /** The broker, for the floor mode only (the fleet's services have their own). */
  amqpUrl: string
  /** The fleet's database names, `<prefix><service>_service`. */
  databases: string[]
  /** Longest wait after the last POST for the run's orders to leave PENDING, ms. */
  drainTimeoutMs: number
  /** Requests waiting for an answer beyond which the client holds back sends (and reports them late). */
  maxInFlight: number
}

const ENVIRONMENT = `
Environment:
  ORDER_SERVICE_URL, PAYMENT_SERVICE_URL, INVENTORY_SERVICE_URL, SHIPMENT_SERVICE_URL
                  the fleet's services (default: http://127.0.0.1:3001 ... 3004)
  POSTGRES_URL    admin connection, for the CPU of the fleet's PostgreSQL backends
                  (default: postgresql://postgres@127.0.0.1:5432/postgres; "none" skips it)
  DATABASE_PREFIX the --prefix the fleet's databases were bootstrapped with (default: none)
  AMQP_URL        --floor only: the broker (default: amqp://guest:guest@127.0.0.1:5672)

Exit codes: 0 done; 1 failed (an overload verdict that does not hold, a fleet that
does not answer); 2 usage error.`

/**
 * The load harness's command line, `npm run load -- [options]` (the convention of @saga/cli-kit):
 * every option parsed and checked here; `loadSettings` turns the result into `LoadSettings`.
 */
export function loadProgram() {
  return createCli({
    name: 'npm run load --',
    description:
      'Place orders at a steady rate against a running fleet (npm start) and report throughput, ' +
      'latency and CPU per saga.',
    version: packageVersion(import.meta.url),
  })
    .option(
      '--rate <n>',
      'orders per second; with --overload the rate the fleet sustains',
      parse.positiveNumber,
      20,
    )
    .option('--seconds <n>', 'seconds of placing (default: 20, with --overload 60)', parse.positiveNumber)
    .addOption(
      new Option('--step', 'find the highest rate that holds for --step-seconds').conflicts([
        'overload',
        'docs',
      ]),
    )
    .option('--step-from <n>', 'first rate of the step mode', parse.positiveNumber, 20)
    .option('--step-by <n>', 'increment per step', parse.positiveNumber, 10)
    .option('--step-seconds <n>', 'seconds per step', parse.positiveNumber, 60)
    .option(
      '--step-max-p99 <ms>',
      'a step holds while POST -> terminal p99 stays under this',
      parse.positiveNumber,
      1_000,
    )
    .addOption(
      new Option(
        '--overload',
        'offer twice --rate for --seconds, then report accepted, shed (503), errors by status, ' +
          'accept p50/p99, the drain time, and whether every accepted order ended terminal',
      ).conflicts(['step', 'docs']),
    )
    .option(
      '--accept-p99 <ms>',
      'with --overload: the p99 an accepted POST must keep',
      parse.positiveNumber,
      50,
    )
    .addOption(
      new Option(
        '--docs',
        'run the documented set (20/s and 50/s steady, then the step mode) and rewrite the results ' +
          'section of docs/performance.md',
      ).conflicts(['step', 'overload']),
    )
    .addOption(
      new Option(
        '--floor',
        "run the saga's minimal broker and database work with plain pg and amqplib (no fleet needed: " +
          'its own database, exchange and quorum queues, removed after) at --rate for --seconds, ' +
          "and report its CPU per saga: the lower bound of the fleet's",
      ).conflicts(['step', 'overload', 'docs']),
    )
    .option(
      '--drain-timeout <s>',
      "seconds to wait for the run's orders to finish after the last POST",
      parse.positiveNumber,
      120,
    )
    .addHelpText('after', ENVIRONMENT)
}

/** The mode options, each a flag of its own (`--docs`, ...); none means a steady run. */
const MODES = ['docs', 'step', 'overload', 'floor'] as const

/** The options `loadProgram` parses. */
export type LoadOptions = ReturnType<ReturnType<typeof loadProgram>['opts']>

/** The settings of a run from the parsed options and the environment (see `loadProgram`'s help). */
export function loadSettings(options: LoadOptions, env: NodeJS.ProcessEnv): LoadSettings {
  const prefix = env.DATABASE_PREFIX ?? ''
  const adminUrl = env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
  const services = Object.fromEntries(
    Object.entries(SERVICES).map(([name, port]) => [
      name,
      (env[`${name.toUpperCase()}_SERVICE_URL`] ?? `http://127.0.0.1:${port}`).replace(/\/$/, ''),
    ]),
  ) as LoadSettings['services']
  const overload = options.overload === true
  return {
    // The mode options conflict with each other, so at most one is set.
    mode: MODES.find((mode) => options[mode] === true) ?? 'steady',
    rate: options.rate * (overload ? 2 : 1),
    seconds: options.seconds ?? (overload ? 60 : 20),
    acceptP99Ms: options.acceptP99,
    step: {
      from: options.stepFrom,
      by: options.stepBy,
      seconds: options.stepSeconds,
      maxP99Ms: options.stepMaxP99,
    },
    services,
    postgresUrl: adminUrl === 'none' ? undefined : adminUrl,
    amqpUrl: env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    databases: Object.keys(SERVICES).map((s) => `${prefix}${s}_service`),
    drainTimeoutMs: options.drainTimeout * 1_000,
    maxInFlight: 256,
  }
}
