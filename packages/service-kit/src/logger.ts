import { createRequire } from 'node:module'
import type { LoggerOptions } from 'pino'
import { serializeError } from './log-errors.js'

/** How log lines are written: `json` (one JSON object per line) or `pretty` (pino-pretty, for people). */
export type LogFormat = 'json' | 'pretty'

/** The decision of `chooseLogFormat`: the format, and a warning to print when a request was not met. */
export interface LogFormatChoice {
  format: LogFormat
  /** Set when `pretty` was asked for but pino-pretty is not installed (the production image). */
  warning?: string
}

/**
 * Picks the log format: `requested` (LOG_FORMAT) when given, else `pretty` when stdout is a terminal,
 * else `json`. `pretty` needs pino-pretty, a development dependency: where it is not installed (the
 * runtime image, `npm ci --omit=dev`) the choice is `json`, with a warning when it was asked for.
 * So containers, CI, tests and `npm start` piped to a file write JSON; NODE_ENV is not read.
 */
export function chooseLogFormat(
  requested: LogFormat | undefined,
  stdoutIsTty: boolean,
  prettyInstalled: boolean,
): LogFormatChoice {
  const wanted = requested ?? (stdoutIsTty ? 'pretty' : 'json')
  if (wanted === 'pretty' && !prettyInstalled) {
    return {
      format: 'json',
      warning:
        requested === 'pretty'
          ? 'LOG_FORMAT=pretty, but pino-pretty is not installed: logging JSON'
          : undefined,
    }
  }
  return { format: wanted }
}

const require = createRequire(import.meta.url)

/** pino-pretty's entry file, or undefined when it is not installed (production dependencies only). */
export function prettyTarget(): string | undefined {
  try {
    return require.resolve('pino-pretty')
  } catch {
    return undefined
  }
}

/**
 * pino options for a service: JSON lines with `service` on every line, ISO timestamps, level names
 * instead of numbers, credentials redacted from logged requests, and errors (`err`, `error`) reduced
 * to type, message and code by `serializeError`. With `format` `pretty` the lines
 * go through pino-pretty (a pino transport, in a worker thread) as one coloured line each, without
 * pid, hostname and service (`npm start` prefixes each line with the service's name).
 * @throws Error when `format` is `pretty` and pino-pretty is not installed (see `chooseLogFormat`)
 */
export function loggerOptions(service: string, level: string, format: LogFormat = 'json'): LoggerOptions {
  const options: LoggerOptions = {
    level,
    base: { service },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    // Errors as type, message and code only: never a driver's client object or a URL with its password.
    serializers: { err: serializeError, error: serializeError },
  }
  if (format === 'json') return options
  const target = prettyTarget()
  if (!target) throw new Error('LOG_FORMAT=pretty needs pino-pretty, which is not installed')
  return {
    ...options,
    transport: {
      target,
      options: {
        colorize: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,service',
      },
    },
  }
}
