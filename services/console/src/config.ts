import { isIP } from 'node:net'
import { SERVICES, type ServiceName } from '@saga/contracts'
import { adminTokenSetting, parseEnv, type Environment } from '@saga/service-kit'
import { z } from 'zod'

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback)
const serviceUrl = (port: number) => z.url({ protocol: /^https?$/ }).default(`http://127.0.0.1:${port}`)

/** An IPv4 or IPv6 address, optionally with a CIDR prefix length (`10.0.0.0/8`, `::1`). */
const isAddressOrCidr = (entry: string): boolean => {
  const [address = '', bits, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  if (bits === undefined) return true
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
}

/**
 * Which proxies in front of the console to believe about the client's address (X-Forwarded-For),
 * as fastify's `trustProxy` takes it: `false` (the default: the peer is the client), a comma-separated
 * list of the proxies' addresses and CIDR ranges (`10.0.0.0/8,127.0.0.1`), or `true` (every peer: only
 * where nothing but the proxy can reach the console, since a direct client could then name any
 * address). The sign-in rate limit keys on that address, so behind an ingress without it every person
 * shares one limit. Hop counts are not taken: fastify 5 refuses them, as they cannot check the peer.
 * Source: fastify's Server reference, `trustProxy`.
 */
const TrustProxy = z.preprocess(
  (value) => (value === '' ? undefined : value),
  z
    .string()
    .transform((value, ctx): boolean | string => {
      if (value === 'true') return true
      if (value === 'false') return false
      const entries = value.split(',').map((entry) => entry.trim())
      const bad = entries.filter((entry) => !isAddressOrCidr(entry))
      if (bad.length === 0) return entries.join(',')
      ctx.addIssue({
        code: 'custom',
        message: `must be true, false or addresses/CIDRs separated by commas; not an address: ${bad.join(', ')}`,
      })
      return z.NEVER
    })
    .default(false),
)

/**
 * The console's environment (services/console/README.md): where it listens, where each service
 * answers, the admin token (optional: without it the console is read-only; operators sign in with
 * it), the viewer token (optional: viewers sign in with it, to read under their name, never to act), how often the one
 * poller reads the fleet and how long it waits for a service before showing it as down.
 */
export const Env = z
  .object({
    CONSOLE_PORT: z.coerce.number().int().min(0).max(65_535).default(3005),
    HOST: z.string().min(1).default('127.0.0.1'),
    CONSOLE_TRUST_PROXY: TrustProxy,
    ORDER_URL: serviceUrl(3001),
    PAYMENT_URL: serviceUrl(3002),
    INVENTORY_URL: serviceUrl(3003),
    SHIPMENT_URL: serviceUrl(3004),
    // The same token the services check (Authorization: Bearer); at least 16 characters.
    ADMIN_TOKEN: adminTokenSetting(),
    // Signs a person in as a viewer: reads and sees, never acts. At least 16 characters, not ADMIN_TOKEN.
    CONSOLE_VIEWER_TOKEN: adminTokenSetting(),
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
  .superRefine((env, ctx) => {
    if (env.CONSOLE_VIEWER_TOKEN !== undefined && env.CONSOLE_VIEWER_TOKEN === env.ADMIN_TOKEN)
      ctx.addIssue({
        code: 'custom',
        path: ['CONSOLE_VIEWER_TOKEN'],
        message: 'must differ from ADMIN_TOKEN (the operators sign in with that one)',
      })
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
