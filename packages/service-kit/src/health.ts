import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Pool } from 'pg'
import type { MessagingStatusSource } from './messaging-status.js'

/** The outcome of one readiness check. */
export interface CheckResult {
  status: 'up' | 'down'
  /** Why it is down, or extra facts (latency, ages) when up. */
  [key: string]: unknown
}

/** A named dependency check; `check` must settle within its own timeout and never throw. */
export interface ReadinessCheck {
  name: string
  check(): Promise<CheckResult>
}

/** Body of `/health/ready`: overall status and each dependency by name. */
export interface ReadinessBody {
  status: 'ready' | 'not ready'
  checks: Record<string, CheckResult>
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs)
  })
  // The losing promise may still reject later; it is already handled by race's subscription.
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * `SELECT 1` on the service's pool, down when it fails or takes longer than `timeoutMs` (default 1,000 ms;
 * a stalled database must not stall the probe that should report it).
 */
export function databaseCheck(pool: Pool, timeoutMs = 1_000): ReadinessCheck {
  return {
    name: 'database',
    async check() {
      const started = performance.now()
      try {
        await withTimeout(pool.query('SELECT 1'), timeoutMs, 'database')
        return { status: 'up', latencyMs: Math.round(performance.now() - started) }
      } catch (error) {
        return { status: 'down', error: message(error) }
      }
    },
  }
}

/** The AMQP connection as messaging reports it. */
export function brokerCheck(messaging: MessagingStatusSource, timeoutMs = 1_000): ReadinessCheck {
  return {
    name: 'broker',
    async check() {
      try {
        const health = await withTimeout(Promise.resolve(messaging.health()), timeoutMs, 'messaging health')
        return health.broker ? { status: 'up' } : { status: 'down', error: 'not connected to RabbitMQ' }
      } catch (error) {
        return { status: 'down', error: message(error) }
      }
    },
  }
}

/**
 * Down when the oldest pending outbox row is older than `maxAgeMs`: events are being written but not
 * published (broker rejecting, relay stuck), so this instance should not take more traffic.
 */
export function outboxCheck(
  messaging: MessagingStatusSource,
  maxAgeMs: number,
  timeoutMs = 1_000,
): ReadinessCheck {
  return {
    name: 'outbox',
    async check() {
      try {
        const health = await withTimeout(Promise.resolve(messaging.health()), timeoutMs, 'messaging health')
        const oldestPendingAgeMs = health.oldestPendingAgeMs ?? 0
        return oldestPendingAgeMs <= maxAgeMs
          ? { status: 'up', oldestPendingAgeMs, maxAgeMs }
          : { status: 'down', error: 'outbox backlog too old', oldestPendingAgeMs, maxAgeMs }
      } catch (error) {
        return { status: 'down', error: message(error) }
      }
    },
  }
}

/** Options of `healthPlugin`. */
export interface HealthOptions {
  checks: ReadinessCheck[]
}

/**
 * `GET /health/live`: 200 while the process serves HTTP (restart me only if this fails).
 * `GET /health/ready`: 200 when every check is up, else 503; the body names each dependency
 * (`{ status, checks: { database: { status }, broker: { status }, outbox: { status } } }`).
 */
export const healthPlugin = fp(
  (app: FastifyInstance, opts: HealthOptions) => {
    app.get('/health/live', { schema: { hide: true }, logLevel: 'warn' }, () => ({ status: 'live' }))
    app.get('/health/ready', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => {
      const results = await Promise.all(opts.checks.map(async (c) => [c.name, await c.check()] as const))
      const body: ReadinessBody = {
        status: results.every(([, r]) => r.status === 'up') ? 'ready' : 'not ready',
        checks: Object.fromEntries(results),
      }
      return reply.code(body.status === 'ready' ? 200 : 503).send(body)
    })
  },
  { name: 'health', fastify: '5.x' },
)
