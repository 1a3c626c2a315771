import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Pool } from 'pg'
import type { MessagingHealthLike, MessagingStatusSource } from './messaging-status.js'

/**
 * The outcome of one check. `degraded`: something is wrong, but not (yet) for the probe the check
 * feeds to act on (a consumer down while the broker is away, or for less than its bound).
 */
export interface CheckResult {
  status: 'up' | 'degraded' | 'down'
  /** Why it is not up, or extra facts (latency, ages). */
  [key: string]: unknown
}

/**
 * What an orchestrator does with a check: `ready` gates `/health/ready` (taken out of the load
 * balancer while not up), `live` gates `/health/live` (restarted while down), `report` only
 * appears in the bodies and in `/health`.
 */
export type CheckRole = 'ready' | 'live' | 'report'

/** A named check; `check` must settle within its own timeout and never throw. */
export interface ReadinessCheck {
  name: string
  /** Default `ready`. */
  role?: CheckRole | undefined
  check(): Promise<CheckResult>
}

/** Body of `/health/ready` and `/health/live`: the probe's verdict and every check by name. */
export interface ReadinessBody {
  status: 'ready' | 'not ready' | 'live' | 'not live'
  checks: Record<string, CheckResult & { role: CheckRole }>
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** `promise`, or a rejection `<what> did not answer within <timeoutMs> ms` when it takes longer. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
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

/** The parts of messaging's report that the health document names, each a check of its own. */
const MESSAGING_AREAS = ['broker', 'outbox', 'consumer'] as const

/**
 * Messaging as `@saga/messaging` reports it: one check per area of `messaging.health()` (broker,
 * outbox, consumer), not up while that report lists a problem of the area (`'broker: relay
 * connection down'`, `'outbox: oldest pending row is ...'`, `'consumer: not consuming every
 * queue'`), with the problems as `error`. Messaging is the one place that knows its state, so
 * nothing is recomputed here; its thresholds are its own options (`readyMaxOutboxAgeMs`).
 *
 * Roles (design.md, "Health"): broker and outbox are `report`: the outbox exists so that writes
 * keep working while the broker is away, so taking every replica out of the load balancer then
 * would stop exactly what it protects. The consumer is `live`: `degraded` while a queue is not
 * consumed and the broker is away or it is younger than `consumerGraceMs` (messaging reopens a
 * cancelled or crashed consumer by itself), `down` when it stayed so with the broker up for longer,
 * so the orchestrator restarts an instance whose consumers are stuck for good.
 * @param timeoutMs longest a report may take, ms (default 1,000)
 * @param consumerGraceMs how long a queue may go unconsumed with the broker up before liveness fails, ms (default 60,000)
 */
export function messagingChecks(
  messaging: MessagingStatusSource,
  timeoutMs = 1_000,
  consumerGraceMs = 60_000,
  now: () => number = Date.now,
): ReadinessCheck[] {
  let stuckSince: number | undefined
  return MESSAGING_AREAS.map((area) => ({
    name: area,
    role: area === 'consumer' ? 'live' : 'report',
    async check(): Promise<CheckResult> {
      try {
        const health = await withTimeout(Promise.resolve(messaging.health()), timeoutMs, 'messaging health')
        const problems = health.problems.filter((p) => p.startsWith(`${area}:`))
        const facts = areaFacts(area, health)
        if (problems.length === 0) {
          if (area === 'consumer') stuckSince = undefined
          return { status: 'up', ...facts }
        }
        const error = problems.join('; ')
        if (area !== 'consumer') return { status: 'down', error, ...facts }
        // Only time with the broker up counts: without a broker no restart brings a consumer back.
        if (!health.broker) {
          stuckSince = undefined
          return { status: 'degraded', error, ...facts }
        }
        stuckSince ??= now()
        const stuckForMs = now() - stuckSince
        return { status: stuckForMs > consumerGraceMs ? 'down' : 'degraded', error, stuckForMs, ...facts }
      } catch (error) {
        return { status: area === 'consumer' ? 'degraded' : 'down', error: message(error) }
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

const run = async (checks: ReadinessCheck[]) =>
  Object.fromEntries(
    await Promise.all(
      checks.map(async (c) => [c.name, { ...(await c.check()), role: c.role ?? 'ready' }] as const),
    ),
  )

/**
 * The probes, for an orchestrator and for people (README, "Health"):
 * - `GET /health/live`: 503 only when a `live` check is `down` (consumers stuck for good), so the
 *   orchestrator restarts the instance; a database or broker outage never fails it.
 * - `GET /health/ready`: 503 when a `ready` check (database, migrations) is not up, so the instance
 *   leaves the load balancer only when it cannot do its own HTTP job.
 * - `GET /health`: always 200, `{ status: 'ok' | 'degraded', live, ready, checks }`: every check
 *   with its role, for people and the CLI.
 * Each body names every check: `{ status, checks: { database: { status, role }, broker: ..., outbox: ..., consumer: ... } }`.
 */
export const healthPlugin = fp(
  (app: FastifyInstance, opts: HealthOptions) => {
    const verdict = (checks: Awaited<ReturnType<typeof run>>) => {
      const results = Object.values(checks)
      return {
        live: results.every((r) => r.role !== 'live' || r.status !== 'down'),
        ready: results.every((r) => r.role !== 'ready' || r.status === 'up'),
        ok: results.every((r) => r.status === 'up'),
      }
    }
    const probe = { schema: { hide: true }, logLevel: 'warn' } as const
    app.get('/health/live', probe, async (_request, reply) => {
      const checks = await run(opts.checks.filter((c) => c.role === 'live'))
      const { live } = verdict(checks)
      return reply.code(live ? 200 : 503).send({ status: live ? 'live' : 'not live', checks })
    })
    app.get('/health/ready', probe, async (_request, reply) => {
      const checks = await run(opts.checks)
      const { ready } = verdict(checks)
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', checks })
    })
    app.get('/health', probe, async () => {
      const checks = await run(opts.checks)
      const { live, ready, ok } = verdict(checks)
      return { status: ok ? 'ok' : 'degraded', live, ready, checks }
    })
  },
  { name: 'health', fastify: '5.x' },
)
