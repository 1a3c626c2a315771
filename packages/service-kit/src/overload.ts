import underPressure from '@fastify/under-pressure'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ServerErrorBody } from './errors.js'

/** The part of a pg Pool the overload check reads: requests queued for a connection. */
export interface PoolLike {
  readonly waitingCount: number
}

/** Options of `overloadPlugin`; every limit 0 = that check is off. */
export interface OverloadOptions {
  /**
   * Shed writes while the event loop's mean delay over the last sample passes this, ms. A process
   * whose CPU is saturated (its own consumers, the relay, requests) answers every request late.
   */
  maxEventLoopDelayMs: number
  /**
   * Shed writes while more than this many queries wait for a connection of `pool` (checked every
   * `sampleIntervalMs`): a request arriving then would wait behind them for the database.
   */
  maxPoolWaiting: number
  /** The service's pg pool (required for `maxPoolWaiting`). */
  pool?: PoolLike | undefined
  /** How often both are sampled, ms. */
  sampleIntervalMs: number
  /** Seconds sent in `Retry-After` with each shed request. */
  retryAfterS: number
}

/**
 * Defaults of the OVERLOAD_* variables. An event-loop delay of 50 ms mean over a 100 ms sample
 * already puts every request of that moment past `POST /orders`' p99 target (50 ms, docs/performance.md);
 * 10 queries waiting for a pool of 10 (the default DATABASE_POOL_MAX) is a second pool's worth of
 * queueing. Measured in docs/performance.md ("Overload").
 */
export const OVERLOAD_DEFAULTS = {
  maxEventLoopDelayMs: 0,
  maxPoolWaiting: 10,
  sampleIntervalMs: 100,
  retryAfterS: 2,
} as const

/** The OVERLOAD_* variables of a service's parsed config. */
export interface OverloadConfig {
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: number
  OVERLOAD_MAX_POOL_WAITING: number
  OVERLOAD_SAMPLE_INTERVAL_MS: number
  OVERLOAD_RETRY_AFTER_S: number
}

/** `overloadPlugin`'s options from the service's config and its pool. */
export const overloadOptions = (config: OverloadConfig, pool: PoolLike): OverloadOptions => ({
  maxEventLoopDelayMs: config.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
  maxPoolWaiting: config.OVERLOAD_MAX_POOL_WAITING,
  pool,
  sampleIntervalMs: config.OVERLOAD_SAMPLE_INTERVAL_MS,
  retryAfterS: config.OVERLOAD_RETRY_AFTER_S,
})

/** Why the service sheds at the moment; `undefined` while it accepts. */
export type OverloadReason = 'event-loop-delay' | 'pool-waiting' | undefined

declare module 'fastify' {
  interface FastifyInstance {
    /** Overload state (`overloadPlugin`): requests shed so far and the reason in force. */
    overload: { shed: number; reason: () => OverloadReason }
  }
}

/** Methods never shed: reads stay answered, so a client can follow what it placed and probes tell the truth. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * How long no sample may find pressure before a shedding spell is logged as over, ms. A signal
 * hovering at its limit trips and clears every few samples; each flicker would otherwise log a start
 * and an end (at the default 100 ms sample, this is 10 samples).
 */
export const SPELL_QUIET_MS = 1_000

/** A shedding spell: from the first sample (or shed request) under pressure until `SPELL_QUIET_MS` without. */
interface Spell {
  reason: Exclude<OverloadReason, undefined>
  startedAt: number
  shed: number
  /** When the pressure was last found gone; undefined while it lasts. */
  clearSince: number | undefined
}

/** The spells of one app, logged at their start and their end (`overloadPlugin`). */
interface SpellLog {
  /** A write was shed for `reason`: counted in the open spell, which it opens if there is none. */
  shed(reason: Spell['reason']): void
  /** A sample found `reason` in force (undefined: no pressure); closes a spell quiet for `SPELL_QUIET_MS`. */
  sample(reason: OverloadReason): void
  /** The app closes: the open spell, if any, is logged as over. */
  close(): void
}

/**
 * The spell log of `app`: a warn when a spell opens, naming the signal with its value and limit
 * (`signal(reason)`), and an info when it is over, with its shed count and length in ms.
 */
function spellLog(
  app: FastifyInstance,
  signal: (reason: Spell['reason']) => Record<string, unknown>,
): SpellLog {
  let spell: Spell | undefined
  const begin = (reason: Spell['reason']): Spell => {
    const opened: Spell = { reason, startedAt: Date.now(), shed: 0, clearSince: undefined }
    app.log.warn(
      { reason, ...signal(reason) },
      `overloaded (${reason}): shedding writes with 503 + Retry-After`,
    )
    return opened
  }
  const end = (over: Spell, at: number) => {
    const durationMs = at - over.startedAt
    app.log.info(
      { reason: over.reason, shed: over.shed, durationMs },
      `no longer overloaded: ${over.shed} writes shed in ${durationMs} ms; accepting writes again`,
    )
  }
  return {
    shed(reason) {
      spell ??= begin(reason)
      spell.shed += 1
      spell.clearSince = undefined
    },
    sample(reason) {
      if (reason !== undefined) {
        spell ??= begin(reason)
        spell.clearSince = undefined
      } else if (spell) {
        spell.clearSince ??= Date.now()
        if (Date.now() - spell.clearSince >= SPELL_QUIET_MS) {
          end(spell, spell.clearSince)
          spell = undefined
        }
      }
    },
    close() {
      if (spell) end(spell, spell.clearSince ?? Date.now())
      spell = undefined
    },
  }
}

/**
 * Load shedding on @fastify/under-pressure: while the event loop's mean delay passes
 * `maxEventLoopDelayMs` or more than `maxPoolWaiting` queries wait for a database connection (both
 * sampled every `sampleIntervalMs`), every write (`POST`, `PUT`, `PATCH`, `DELETE`) is answered at
 * once with 503, `Retry-After: retryAfterS` and the fleet's 5xx error shape
 * (`{ error, message, requestId }`), before its body is parsed or the database touched. Reads (GET,
 * probes, /metrics) are never shed. Logged per spell, never per request: a warn when a spell starts,
 * naming the signal that started it with its value and limit (`{ reason: 'pool-waiting',
 * poolWaiting: 14, limit: 10 }`), and an info when it is over (no pressure for `SPELL_QUIET_MS`, or
 * the app closes) with the spell's own count and length (`{ reason, shed: 37, durationMs: 2300 }`).
 * `app.overload.shed` counts shed requests since start (exported on /metrics as
 * `saga_http_requests_shed_total` when the metrics plugin is registered after this one). Without any
 * limit set it registers nothing but the counter.
 */
export const overloadPlugin = fp(
  async (app: FastifyInstance, opts: OverloadOptions) => {
    const state = { shed: 0, reason: (): OverloadReason => undefined }
    app.decorate('overload', state)
    const poolCheck = opts.maxPoolWaiting > 0 && opts.pool !== undefined
    if (opts.maxEventLoopDelayMs <= 0 && !poolCheck) return

    let poolBusy = false
    const pool = opts.pool
    const sampleIntervalMs = Math.max(10, opts.sampleIntervalMs)
    // The measured value of the signal and its limit, for the line that opens a spell.
    const spells = spellLog(app, (reason) =>
      reason === 'pool-waiting'
        ? { poolWaiting: pool?.waitingCount, limit: opts.maxPoolWaiting }
        : { eventLoopDelayMs: Math.round(app.memoryUsage().eventLoopDelay), limit: opts.maxEventLoopDelayMs },
    )

    const respond = (request: FastifyRequest, reply: FastifyReply, reason: Spell['reason']) => {
      if (READS.has(request.method)) return // under-pressure goes on with the request
      state.shed += 1
      // A request can meet the pressure before the spell watcher's next sample does.
      spells.shed(reason)
      const body: ServerErrorBody = {
        error: 'Service Unavailable',
        message: `The service is overloaded; retry in ${opts.retryAfterS} s`,
        requestId: request.id,
      }
      // Sent here, as under-pressure's README does; the route's hooks and handler then never run.
      void reply.code(503).header('retry-after', String(opts.retryAfterS)).send(body)
    }

    await app.register(underPressure, {
      sampleInterval: sampleIntervalMs,
      maxEventLoopDelay: opts.maxEventLoopDelayMs,
      ...(poolCheck && pool
        ? {
            // A number in memory, so sampling it often costs nothing; false = under pressure.
            healthCheck: () => {
              poolBusy = pool.waitingCount > opts.maxPoolWaiting
              return Promise.resolve(!poolBusy)
            },
            healthCheckInterval: sampleIntervalMs,
          }
        : {}),
      pressureHandler: (request, reply, type) =>
        respond(request, reply, type === 'healthCheck' ? 'pool-waiting' : 'event-loop-delay'),
    })

    state.reason = () => {
      if (!app.isUnderPressure()) return undefined
      return poolBusy ? 'pool-waiting' : 'event-loop-delay'
    }
    // Spells are opened and closed by sampling, not by requests: a spell is logged as over even
    // when no request arrives after it, and its length does not depend on the next client.
    const watcher = setInterval(() => spells.sample(state.reason()), sampleIntervalMs)
    watcher.unref()
    app.addHook('onClose', (_app, done) => {
      clearInterval(watcher)
      spells.close()
      done()
    })
  },
  { name: 'overload', fastify: '5.x' },
)
