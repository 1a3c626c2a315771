import { parseArgs } from 'node:util'

/** The four services, in chain order, and their `npm start` ports. */
const SERVICES = { order: 3001, payment: 3002, inventory: 3003, shipment: 3004 } as const

/** What a load run needs to know; see `loadSettings` for where each value comes from. */
export interface LoadSettings {
  mode: 'steady' | 'step' | 'docs' | 'overload'
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
  /** The fleet's database names, `<prefix><service>_service`. */
  databases: string[]
  /** Longest wait after the last POST for the run's orders to leave PENDING, ms. */
  drainTimeoutMs: number
  /** Requests waiting for an answer beyond which the client holds back sends (and reports them late). */
  maxInFlight: number
}

const USAGE = `npm run load -- [options]
  --rate N            orders per second (default 20)
  --seconds N         seconds of placing (default 20)
  --step              find the highest rate that holds for --step-seconds (default 60)
  --step-seconds N    seconds per step (default 60)
  --step-from N       first rate of the step mode (default 20)
  --step-by N         increment per step (default 10)
  --step-max-p99 MS   a step holds while POST -> terminal p99 stays under this (default 1000)
  --overload          offer twice --rate (give the sustainable rate) for --seconds (default 60), then
                      report accepted, shed (503), errors by status, accept p50/p99, the drain time,
                      and whether every accepted order ended terminal (nothing lost)
  --accept-p99 MS     overload mode: the p99 an accepted POST must keep (default 50, issue 10)
  --docs              run the documented set (20/s and 50/s steady, then the step mode) and
                      rewrite the results section of docs/performance.md
  --drain-timeout S   seconds to wait for the run's orders to finish after the last POST (default 120)
Environment: ORDER_SERVICE_URL, PAYMENT_SERVICE_URL, INVENTORY_SERVICE_URL, SHIPMENT_SERVICE_URL
(default http://127.0.0.1:3001-3004), POSTGRES_URL (admin, for the fleet's PostgreSQL CPU; default
postgresql://postgres@127.0.0.1:5432/postgres; "none" skips it), DATABASE_PREFIX (the bootstrap prefix, default none).`

const positive = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got '${raw}'`)
  return value
}

/**
 * Parses the command line and the environment. Throws an Error naming the bad option (with the
 * usage text) for an unknown option or a value that is not a positive number.
 */
export function loadSettings(argv: string[], env: NodeJS.ProcessEnv): LoadSettings {
  let values: Record<string, string | boolean | undefined>
  try {
    ;({ values } = parseArgs({
      args: argv,
      options: {
        rate: { type: 'string' },
        seconds: { type: 'string' },
        step: { type: 'boolean' },
        'step-from': { type: 'string' },
        'step-by': { type: 'string' },
        'step-seconds': { type: 'string' },
        'step-max-p99': { type: 'string' },
        docs: { type: 'boolean' },
        overload: { type: 'boolean' },
        'accept-p99': { type: 'string' },
        'drain-timeout': { type: 'string' },
        help: { type: 'boolean' },
      },
    }))
  } catch (error) {
    throw new Error(`${(error as Error).message}\n\n${USAGE}`, { cause: error })
  }
  if (values.help) throw new Error(USAGE)
  const str = (key: string): string | undefined => values[key] as string | undefined
  const prefix = env.DATABASE_PREFIX ?? ''
  const adminUrl = env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
  const services = Object.fromEntries(
    Object.entries(SERVICES).map(([name, port]) => [
      name,
      (env[`${name.toUpperCase()}_SERVICE_URL`] ?? `http://127.0.0.1:${port}`).replace(/\/$/, ''),
    ]),
  ) as LoadSettings['services']
  return {
    mode: values.docs ? 'docs' : values.step ? 'step' : values.overload ? 'overload' : 'steady',
    rate: positive('--rate', str('rate'), 20) * (values.overload ? 2 : 1),
    seconds: positive('--seconds', str('seconds'), values.overload ? 60 : 20),
    acceptP99Ms: positive('--accept-p99', str('accept-p99'), 50),
    step: {
      from: positive('--step-from', str('step-from'), 20),
      by: positive('--step-by', str('step-by'), 10),
      seconds: positive('--step-seconds', str('step-seconds'), 60),
      maxP99Ms: positive('--step-max-p99', str('step-max-p99'), 1_000),
    },
    services,
    postgresUrl: adminUrl === 'none' ? undefined : adminUrl,
    databases: Object.keys(SERVICES).map((s) => `${prefix}${s}_service`),
    drainTimeoutMs: positive('--drain-timeout', str('drain-timeout'), 120) * 1_000,
    maxInFlight: 256,
  }
}
