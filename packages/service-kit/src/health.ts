import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Pool } from 'pg'
import type { MessagingHealthLike, MessagingStatusSource } from './messaging-status.js'

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

/** The parts of messaging's report that readiness names, each a check of its own. */
const MESSAGING_AREAS = ['broker', 'outbox', 'consumer'] as const

/**
 * Readiness as `@saga/messaging` reports it: one check per area of `messaging.health()` (broker,
 * outbox, consumer), down while that report lists a problem of the area (`'broker: relay connection
 * down'`, `'outbox: oldest pending row is ...'`, `'consumer: not consuming every queue'`), with the
 * problems as `error`. Messaging is the one place that knows its state (it also knows whether every
 * queue is consumed), so nothing is recomputed here; its thresholds are its own options
 * (`readyMaxOutboxAgeMs`). The broker check also carries every field the report adds at the top level.
 * @param timeoutMs longest a report may take, ms (default 1,000)
 */
export function messagingChecks(messaging: MessagingStatusSource, timeoutMs = 1_000): ReadinessCheck[] {
  return MESSAGING_AREAS.map((area) => ({
    name: area,
    async check() {
      try {
        const health = await withTimeout(Promise.resolve(messaging.health()), timeoutMs, 'messaging health')
        const problems = health.problems.filter((p) => p.startsWith(`${area}:`))
        const facts = areaFacts(area, health)
        return problems.length === 0
          ? { status: 'up', ...facts }
          : { status: 'down', error: problems.join('; '), ...facts }
      } catch (error) {
        return { status: 'down', error: message(error) }
      }
    },
  }))
}

function areaFacts(area: (typeof MESSAGING_AREAS)[number], health: MessagingHealthLike): object {
  if (area === 'outbox') return { oldestPendingAgeMs: health.oldestPendingAgeMs }
  if (area === 'consumer') return {}
  // Scalars only: the relay/consumer sections and the problem list are reported by their own checks.
  return Object.fromEntries(
    Object.entries(health).filter(
      ([key, value]) => key !== 'ready' && key !== 'oldestPendingAgeMs' && typeof value !== 'object',
    ),
  )
}

/** Options of `healthPlugin`. */
export interface HealthOptions {
  checks: ReadinessCheck[]
}

/**
 * `GET /health/live`: 200 while the process serves HTTP (restart me only if this fails).
 * `GET /health/ready`: 200 when every check is up, else 503; the body names each dependency
 * (`{ status, checks: { database: { status }, broker: { status }, outbox: { status }, consumer: { status } } }`).
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
