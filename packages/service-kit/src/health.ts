import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Pool } from 'pg'
import type { HealthArea, MessagingHealth } from '@saga/messaging/parts'

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

/** What `messagingChecks` reads: `@saga/messaging`'s `health()`, or anything with areas of its shape. */
export interface HealthAreaSource {
  health(): MessagingHealth
}

const ROLE_OF_PROBE: Record<HealthArea['probe'], CheckRole> = { liveness: 'live', report: 'report' }

/**
 * One check per area of `source.health()` (`@saga/messaging`: broker, outbox, consumer), named by
 * the area, with the area's status, its `detail` as `error` when it is not up, and its facts. The
 * area's `probe` gives the check's role: `liveness` -> `live` (the orchestrator restarts the
 * instance while it is down), `report` -> `report` (shown, never gating). The areas decide their
 * own status and thresholds; nothing is recomputed here. A report that throws is `down` for a
 * report area and `degraded` (never restarting) for a liveness one.
 */
export function messagingChecks(source: HealthAreaSource): ReadinessCheck[] {
  return source.health().areas.map(({ area: name, probe }) => ({
    name,
    role: ROLE_OF_PROBE[probe],
    check(): Promise<CheckResult> {
      let area: HealthArea | undefined
      try {
        area = source.health().areas.find((a) => a.area === name)
      } catch (error) {
        return Promise.resolve({ status: probe === 'liveness' ? 'degraded' : 'down', error: message(error) })
      }
      if (!area) return Promise.resolve({ status: 'up' })
      return Promise.resolve({
        status: area.status,
        ...(area.ok ? {} : { error: area.detail }),
        ...area.facts,
      })
    },
  }))
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
 * The probes, for an orchestrator and for people (docs/operations.md, "Health: which probe means what"):
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
      return reply
        .code(live ? 200 : 503)
        .send({ status: live ? 'live' : 'not live', checks } satisfies ReadinessBody)
    })
    app.get('/health/ready', probe, async (_request, reply) => {
      const checks = await run(opts.checks)
      const { ready } = verdict(checks)
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not ready', checks } satisfies ReadinessBody)
    })
    app.get('/health', probe, async () => {
      const checks = await run(opts.checks)
      const { live, ready, ok } = verdict(checks)
      return { status: ok ? 'ok' : 'degraded', live, ready, checks }
    })
  },
  { name: 'health', fastify: '5.x' },
)
