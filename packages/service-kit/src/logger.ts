import type { LoggerOptions } from 'pino'

/**
 * pino options for a service: JSON lines with `service` on every line, ISO timestamps, level names
 * instead of numbers, and credentials redacted from logged requests.
 */
export function loggerOptions(service: string, level: string): LoggerOptions {
  return {
    level,
    base: { service },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
  }
}
