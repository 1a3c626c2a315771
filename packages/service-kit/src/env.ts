import type { ServiceName } from '@saga/contracts'
import { MIN_ADMIN_TOKEN_LENGTH } from '@saga/messaging-admin/fastify'
import { z } from 'zod'
import { DEFAULT_POOL_IDLE_TIMEOUT_MS, DEFAULT_SESSION_LIMITS } from './database-session.js'
import { localDatabaseUrl } from './local-database-url.js'
import { OVERLOAD_DEFAULTS } from './overload.js'
import { AMQP_URL_RULE, POSTGRES_URL_RULE, urlSetting } from './url-setting.js'

// The services of the fleet are the saga map's (@saga/contracts).
export type { ServiceName }

/** What differs per service in the shared environment: its name and its default HTTP port. */
export interface ServiceEnvDefaults {
  service: ServiceName
  /** Default TCP port (order 3001, payment 3002, inventory 3003, shipment 3004). */
  port: number
}

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback)

/**
 * The admin token setting (ADMIN_TOKEN) of a service or the console: optional, at least 16
 * characters. Empty is unset here, unlike other settings (`Environment`): Compose passes a token the
 * operator did not set as `${ADMIN_TOKEN:-}`, i.e. empty, and that must mean read-only, not a refusal
 * to start.
 */
export const adminTokenSetting = () =>
  z.preprocess(
    (value) => (value === '' ? undefined : value),
    z
      .string()
      .min(MIN_ADMIN_TOKEN_LENGTH, `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`)
      .optional(),
  )
const nonNegativeInt = (fallback: number) => z.coerce.number().int().min(0).default(fallback)

/**
 * The zod schema of the environment every service shares (names and defaults in docs/operations.md, "Environment variables"):
 * PORT, HOST, DATABASE_URL, DATABASE_POOL_MAX, DATABASE_POOL_IDLE_TIMEOUT_MS, DATABASE_*_TIMEOUT_MS (ms), AMQP_URL, AMQP_EXCHANGE, AMQP_QUEUE_PREFIX, LOG_LEVEL, LOG_FORMAT, MIGRATE_ON_START,
 * OUTBOX_* (ms, counts), CONSUMER_*, READY_MAX_OUTBOX_AGE_MS, OVERLOAD_* (ms, counts, s), INSTANCES,
 * SHUTDOWN_TIMEOUT_MS, ADMIN_TOKEN (optional, at least 16 characters).
 * Extend it with `.extend({...})` for service-specific variables.
 */
export function serviceEnvSchema({ service, port }: ServiceEnvDefaults) {
  return z.object({
    PORT: z.coerce.number().int().min(0).max(65_535).default(port),
    HOST: z.string().min(1).default('0.0.0.0'),
    // URL-shaped: checked by urlSetting, whose messages never quote the value (it may hold a password).
    DATABASE_URL: urlSetting(POSTGRES_URL_RULE).default(localDatabaseUrl(service)),
    // Shared by Prisma (routes, handler transactions) and messaging (relay claims, LISTEN, retention).
    DATABASE_POOL_MAX: positiveInt(10),
    // A pooled connection idle this long is closed (0 = never); why so long: DEFAULT_POOL_IDLE_TIMEOUT_MS.
    DATABASE_POOL_IDLE_TIMEOUT_MS: nonNegativeInt(DEFAULT_POOL_IDLE_TIMEOUT_MS),
    // Session limits of every pooled connection, ms (0 = none); why these: DEFAULT_SESSION_LIMITS.
    DATABASE_STATEMENT_TIMEOUT_MS: nonNegativeInt(DEFAULT_SESSION_LIMITS.statementTimeoutMs),
    DATABASE_LOCK_TIMEOUT_MS: nonNegativeInt(DEFAULT_SESSION_LIMITS.lockTimeoutMs),
    DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: nonNegativeInt(
      DEFAULT_SESSION_LIMITS.idleInTransactionTimeoutMs,
    ),
    // One broker, or a cluster's nodes separated by commas (tried in turn; AMQP_URL_RULE).
    AMQP_URL: urlSetting(AMQP_URL_RULE).default('amqp://guest:guest@127.0.0.1:5672'),
    AMQP_EXCHANGE: z.string().min(1).default('saga.events'),
    AMQP_QUEUE_PREFIX: z.string().min(1).default(service),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    // Unset: pretty on a terminal where pino-pretty is installed, else JSON (chooseLogFormat).
    LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
    MIGRATE_ON_START: z.stringbool().default(true),
    OUTBOX_POLL_INTERVAL_MS: positiveInt(1_000),
    OUTBOX_BATCH_SIZE: positiveInt(100),
    OUTBOX_PUBLISH_TIMEOUT_MS: positiveInt(5_000),
    OUTBOX_MAX_ATTEMPTS: positiveInt(10),
    // The committing process publishes its rows at once; false leaves every row to the relay's claim.
    OUTBOX_PUBLISH_ON_COMMIT: z.stringbool().default(true),
    // Published rows are deleted after this age: dead index entries slow the claim query down.
    OUTBOX_RETENTION_MS: positiveInt(3_600_000),
    // At least twice CONSUMER_BATCH_MAX (default 20), so the next batch fills while one runs.
    CONSUMER_PREFETCH: positiveInt(40),
    // Handler transactions at once per instance across all handler queues. Unset: messaging takes
    // 40 % of DATABASE_POOL_MAX (4 of 10), leaving connections for HTTP requests and the relay.
    CONSUMER_CONCURRENCY: z.coerce.number().int().positive().optional(),
    CONSUMER_MAX_ATTEMPTS: positiveInt(10),
    // Deliveries of one handler queue per transaction under load (at most half CONSUMER_PREFETCH;
    // 1 = off). Unset: messaging takes half the prefetch, at most 20.
    CONSUMER_BATCH_MAX: z.coerce.number().int().positive().optional(),
    // Handler time one batch may hold, ms (messaging's consumer.batchBudgetMs). Default Infinity:
    // batches sized by CONSUMER_BATCH_MAX alone. The fleet's handlers only write to their own
    // database, where messaging's 20 ms default cost 5-13 % more CPU per saga (npm run load --rate
    // 100, 2026-12-06: 19.4-21.2 ms against 18.5-18.8 ms); a service with handlers that call other
    // systems sets a budget.
    CONSUMER_BATCH_BUDGET_MS: z
      .literal('Infinity')
      .transform(() => Number.POSITIVE_INFINITY)
      .or(z.coerce.number().positive())
      .default(Number.POSITIVE_INFINITY),
    READY_MAX_OUTBOX_AGE_MS: positiveInt(60_000),
    // Load shedding (overloadPlugin): writes get 503 + Retry-After while either limit is passed; 0 = off.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: nonNegativeInt(OVERLOAD_DEFAULTS.maxEventLoopDelayMs),
    OVERLOAD_MAX_POOL_WAITING: nonNegativeInt(OVERLOAD_DEFAULTS.maxPoolWaiting),
    OVERLOAD_SAMPLE_INTERVAL_MS: positiveInt(OVERLOAD_DEFAULTS.sampleIntervalMs),
    OVERLOAD_RETRY_AFTER_S: positiveInt(OVERLOAD_DEFAULTS.retryAfterS),
    // Processes of this service (runServer forks them with node:cluster; they share PORT).
    INSTANCES: positiveInt(1),
    // Above messaging's drain timeout (15 s), so in-flight handlers finish before a forced exit.
    SHUTDOWN_TIMEOUT_MS: positiveInt(20_000),
    // Bearer token of the admin writes (/admin/messaging POST routes, the order service's admin
    // cancel). Unset: those writes are refused with 403 and the admin surface is read-only.
    ADMIN_TOKEN: adminTokenSetting(),
  })
}

/** The shared part of every service's parsed config. */
export type BaseServiceConfig = z.output<ReturnType<typeof serviceEnvSchema>>

/** One environment variable that failed to parse: its name, the reason, and the value if it may be shown. */
export interface EnvIssue {
  variable: string
  issue: string
  /** Whether the variable was set at all. */
  set: boolean
  /** The value given, when `shownValue` lets it be quoted; otherwise undefined. */
  received: string | undefined
}

/** Names of variables whose values may be credentials or carry them (URLs, keys, tokens, ...). */
const SECRET_NAME = /URL|ENDPOINT|PASSWORD|PASSWD|SECRET|TOKEN|KEY|CREDENTIAL|HEADERS|ACCOUNT|AUTH/i

/**
 * `value` when an error message may quote it, else undefined: never for a variable whose name says
 * it may hold a credential (`*_URL`, `*_PASSWORD`, `*_TOKEN`, ...), never for a value that looks like
 * a URL or user@host (it may hold a password whatever the variable), never past 64 characters.
 * Example: `shownValue('PORT', 'eighty') === 'eighty'`, `shownValue('DATABASE_URL', 'x') === undefined`.
 */
export function shownValue(variable: string, value: string | undefined): string | undefined {
  if (value === undefined || SECRET_NAME.test(variable)) return undefined
  if (value.includes('@') || value.includes('://') || value.length > 64) return undefined
  return value
}

/** Thrown by `parseEnv` when the environment does not parse; `issues` names each bad variable. */
export class EnvError extends Error {
  constructor(readonly issues: EnvIssue[]) {
    super(
      `Invalid environment:\n${issues
        .map((i) => {
          const got = !i.set
            ? ' (not set)'
            : i.received === undefined
              ? ''
              : ` (got ${JSON.stringify(i.received)})`
          return `  ${i.variable}: ${i.issue}${got}`
        })
        .join('\n')}`,
    )
    this.name = 'EnvError'
  }
}

/** An environment, e.g. `process.env`. An empty string is a value, not an unset variable. */
export type Environment = Record<string, string | undefined>

/**
 * Parses `env` with `schema`.
 * @throws EnvError naming every bad variable with the reason, and the value received where it may be
 * shown (`shownValue`: never a URL or anything that may hold a credential).
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: Environment): z.output<S> {
  const result = schema.safeParse(env)
  if (result.success) return result.data
  throw new EnvError(
    result.error.issues.map((issue) => {
      const variable = issue.path.map(String).join('.') || '(environment)'
      const value = env[variable]
      return {
        variable,
        issue: issue.message,
        set: value !== undefined,
        received: shownValue(variable, value),
      }
    }),
  )
}

/**
 * An entry point's config: `loadConfig()`, or, when it throws an `EnvError`, that error's message
 * (every bad variable) on stderr prefixed with `service`, and exit code 1. Other errors propagate.
 */
export function loadConfigOrExit<C>(service: string, loadConfig: () => C): C {
  try {
    return loadConfig()
  } catch (error) {
    if (!(error instanceof EnvError)) throw error
    process.stderr.write(`${service}: ${error.message}\n`)
    process.exit(1)
  }
}
