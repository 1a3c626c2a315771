import { SERVICES, type ServiceName } from '@saga/contracts'
import { adminTokenSetting, parseEnv, type Environment } from '@saga/service-kit'
import { z } from 'zod'

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback)
const serviceUrl = (port: number) => z.url({ protocol: /^https?$/ }).default(`http://127.0.0.1:${port}`)

/**
 * The console's environment (services/console/README.md): where it listens, where each service
 * answers, the admin token (optional: without it the console is read-only), how often the one
 * poller reads the fleet and how long it waits for a service before showing it as down.
 */
export const Env = z
  .object({
    CONSOLE_PORT: z.coerce.number().int().min(0).max(65_535).default(3005),
    HOST: z.string().min(1).default('127.0.0.1'),
    ORDER_URL: serviceUrl(3001),
    PAYMENT_URL: serviceUrl(3002),
    INVENTORY_URL: serviceUrl(3003),
    SHIPMENT_URL: serviceUrl(3004),
    // The same token the services check (Authorization: Bearer); at least 16 characters.
    ADMIN_TOKEN: adminTokenSetting(),
    CONSOLE_POLL_MS: positiveInt(2_000).pipe(z.number().min(100)),
    // Per request to a service, ms: a slow service shows as down after it and never holds the others.
    CONSOLE_UPSTREAM_TIMEOUT_MS: positiveInt(1_500),
    // e.g. http://127.0.0.1:16686/trace/{traceId}; the UI links a message's trace through it.
    // Empty is unset, as Compose passes `${TRACE_URL_TEMPLATE:-}` when it is not set.
    TRACE_URL_TEMPLATE: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .string()
        .regex(/^https?:\/\/\S*\{traceId\}\S*$/, { error: 'must be an http(s) URL holding {traceId}' })
        .optional(),
    ),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
    SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  })
  .transform((env) => ({
    ...env,
    // runServer's names for the listening address.
    PORT: env.CONSOLE_PORT,
    serviceUrls: {
      order: env.ORDER_URL,
      payment: env.PAYMENT_URL,
      inventory: env.INVENTORY_URL,
      shipment: env.SHIPMENT_URL,
    } satisfies Record<ServiceName, string>,
  }))

/** The parsed configuration of the console. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable (never quoting ADMIN_TOKEN or a URL)
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)

/** The services in chain order (the saga map's). */
export const SERVICE_NAMES: readonly ServiceName[] = SERVICES
