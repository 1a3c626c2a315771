import { splitBrokerUrls } from '@saga/messaging/parts'
import { z } from 'zod'

/** What a URL-shaped setting must look like. */
export interface UrlSettingRule {
  /** Accepted schemes without `:`, the first one named in messages, e.g. `['postgresql', 'postgres']`. */
  schemes: readonly string[]
  /** The shape shown when the value is not a URL at all, e.g. `postgresql://user:password@host:5432/database`. */
  example: string
  /** A further check of a parsed URL (query parameters); returns what is wrong, or undefined. */
  check?: (url: URL) => string | undefined
  /**
   * Several URLs separated by commas may be given (the nodes of a cluster; whitespace around each
   * allowed), each checked alone, a problem naming its position (`URL 2 of 3 is empty`).
   */
  list?: boolean
}

/** libpq's `sslmode` values (PostgreSQL docs, "Connection Strings", 34.1.2). */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const

/** DATABASE_URL and POSTGRES_URL: a PostgreSQL connection URL with, if any, a valid `sslmode`. */
export const POSTGRES_URL_RULE: UrlSettingRule = {
  schemes: ['postgresql', 'postgres'],
  example: 'postgresql://user:password@host:5432/database',
  check: (url) => {
    const mode = url.searchParams.get('sslmode')
    if (mode === null || (SSL_MODES as readonly string[]).includes(mode)) return undefined
    return `sslmode ${JSON.stringify(mode.slice(0, 20))} is not one of ${SSL_MODES.join(', ')}`
  },
}

/**
 * AMQP_URL: an AMQP 0-9-1 URL (amqplib accepts `amqp` and `amqps`), or the URLs of a cluster's nodes
 * separated by commas, which `@saga/messaging` tries in turn.
 */
export const AMQP_URL_RULE: UrlSettingRule = {
  schemes: ['amqp', 'amqps'],
  example: 'amqp://user:password@host:5672/vhost',
  list: true,
}

/** OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: an OTLP collector's base URL. */
export const OTLP_ENDPOINT_RULE: UrlSettingRule = {
  schemes: ['http', 'https'],
  example: 'http://collector:4318',
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{0,31}):\/\//

/**
 * Why `value` is not the URL `rule` asks for, or undefined when it is. The reason never quotes the
 * value, its user name, password, host or port (a malformed URL cannot be split reliably, so any of
 * them might be part of the password); it names the scheme, which comes before `://`, and the fault.
 * Examples: `the port is not a number from 1 to 65535`, `the scheme is mysql://, expected postgresql://`,
 * for a `list` rule `URL 2 of 3: the scheme is http://, expected amqp:// or amqps://`.
 */
export function urlSettingProblem(value: string, rule: UrlSettingRule): string | undefined {
  if (!rule.list) return oneUrlProblem(value, rule)
  const entries = splitBrokerUrls(value)
  if (entries.length === 1) return oneUrlProblem(entries[0] as string, rule)
  const problems = entries.flatMap((entry, i) => {
    const problem = entry === '' ? 'is empty' : oneUrlProblem(entry, rule)
    const which = `URL ${i + 1} of ${entries.length}`
    if (problem === undefined) return []
    return [problem.startsWith('is ') ? `${which} ${problem}` : `${which}: ${problem}`]
  })
  if (problems.length === 0) return undefined
  // An entry with no scheme is most often the tail of a password cut at an unencoded comma.
  const hint = problems.some((p) => p.includes('is not a URL')) ? ' (write a comma in a password as %2C)' : ''
  return `${problems.join('; ')}${hint}`
}

/** `urlSettingProblem` of one URL. */
function oneUrlProblem(value: string, rule: UrlSettingRule): string | undefined {
  const expected = rule.schemes.map((s) => `${s}://`).join(' or ')
  const scheme = SCHEME.exec(value)?.[1]
  if (scheme === undefined) return `is not a URL: expected ${rule.example}`
  if (!rule.schemes.includes(scheme.toLowerCase()))
    return `the scheme is ${scheme.toLowerCase()}://, expected ${expected}`
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return unparsable(value.slice(scheme.length + 3))
  }
  // No host is valid: both drivers then take localhost (libpq's URLs may name a socket in `?host=`).
  return rule.check?.(url)
}

/** What is wrong with a URL's text after `scheme://` that WHATWG URL could not parse. */
function unparsable(rest: string): string {
  const afterUser = rest.slice(rest.lastIndexOf('@') + 1)
  const hostPort = afterUser.split(/[/?#]/)[0] ?? ''
  const port = /:([^:\]]*)$/.exec(hostPort)?.[1]
  if (port !== undefined && port !== '') {
    if (!/^\d+$/.test(port)) return 'the port is not a number from 1 to 65535'
    if (Number(port) > 65_535) return 'the port is out of range: it must be a number from 1 to 65535'
  }
  return (
    'is not a valid URL: check the host and port, and percent-encode the characters ' +
    '@ : / ? # % in the user name and password'
  )
}

/**
 * A zod schema for a URL-shaped environment variable: a string `urlSettingProblem` finds nothing
 * wrong with. Its error messages never quote the value (`parseEnv` does not either for such
 * variables), so a password in a malformed URL is never printed.
 */
export function urlSetting(rule: UrlSettingRule) {
  return z.string().superRefine((value, ctx) => {
    const problem = urlSettingProblem(value, rule)
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
  })
}

/**
 * The problems of the URL-shaped variables of `env` that are set, one line each
 * (`POSTGRES_URL: the port is not a number from 1 to 65535`), for entry points that read such
 * variables without a zod schema (`npm start`, `npm run bootstrap`). Empty when all are fine.
 */
export function urlSettingProblems(
  env: Record<string, string | undefined>,
  rules: Record<string, UrlSettingRule>,
): string[] {
  return Object.entries(rules).flatMap(([variable, rule]) => {
    const value = env[variable]
    const problem = value === undefined ? undefined : urlSettingProblem(value, rule)
    return problem === undefined ? [] : [`${variable}: ${problem}`]
  })
}
