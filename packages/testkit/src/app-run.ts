import type pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { AMQP_URL, deleteBrokerObjects } from './broker.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { uniqueName } from './names.js'
import { tapQueue, type TapQueue } from './tap-queue.js'

/**
 * What `startUpstream` uses of `@saga/messaging`, handed in by the caller (`import * as messaging
 * from '@saga/messaging'`): testkit cannot depend on messaging, whose own tests depend on testkit.
 * `M` is the message `enqueue` takes (messaging's `OutgoingMessage`).
 */
export interface MessagingModule<Tx, D, M> {
  pgDatabase(pool: pg.Pool): D
  createMessaging(options: {
    service: string
    database: D
    pool: pg.Pool
    amqpUrl: string
    exchange: string
  }): {
    start(): Promise<void>
    stop(): Promise<void>
    transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  }
  enqueue(tx: Tx, message: M): Promise<unknown>
}

/** A bare messaging instance with its own outbox, standing in for the other services of the saga. */
export interface Upstream<M> {
  /** Writes `message` to the upstream's outbox in one transaction; its relay publishes it. */
  publish(message: M): Promise<void>
  /** Stops the messaging instance and drops its database. */
  close(): Promise<void>
}

/** Options of `startUpstream`. */
export interface UpstreamOptions<Tx, D, M> {
  /** `@saga/messaging` itself. */
  messaging: MessagingModule<Tx, D, M>
  /** Path of `@saga/messaging/sql/messaging.sql`, applied to the upstream's database. */
  messagingSql: string
  /** The exchange the upstream publishes to. */
  exchange: string
  /** Prefix of the upstream's per-run database name. */
  prefix: string
}

/**
 * Starts an upstream publisher (service name `upstream`) on `options.exchange`, on a per-run
 * database of its own with the messaging tables.
 */
export async function startUpstream<Tx, D, M>(options: UpstreamOptions<Tx, D, M>): Promise<Upstream<M>> {
  const { messaging } = options
  const db = await createTestDatabase({ prefix: options.prefix, sqlFiles: [options.messagingSql] })
  const instance = messaging.createMessaging({
    service: 'upstream',
    database: messaging.pgDatabase(db.pool),
    pool: db.pool,
    amqpUrl: AMQP_URL,
    exchange: options.exchange,
  })
  try {
    await instance.start()
  } catch (error) {
    await db.drop()
    throw error
  }
  return {
    publish: (message) => instance.transaction((tx) => messaging.enqueue(tx, message).then(() => undefined)),
    async close() {
      await instance.stop()
      await db.drop()
    },
  }
}

/** Options of `useAppRun`. */
export interface AppRunOptions<A, Tx, D, M> {
  /**
   * The service's name: the run's database is `<service>_app_…`, its exchange `<service>_app_events_…`,
   * its queue prefix `<service>_app_…` and the upstream's database `<service>_upstream_…`.
   */
  service: string
  /** Binding keys of the tap on the run's exchange, e.g. `['order.#']`. */
  tap: string[]
  /**
   * Boots the app on `env` (see `AppRun.env`) and resolves once it is ready. Omitted: no app is
   * booted before the tests (they boot their own from `env`), and `AppRun.app` throws.
   */
  boot?: (env: Record<string, string>) => Promise<A>
  /** `@saga/messaging` and the path of its messaging.sql: starts an upstream publisher on the exchange. */
  upstream?: Pick<UpstreamOptions<Tx, D, M>, 'messaging' | 'messagingSql'>
}

/** What `useAppRun` gives each test. */
export interface AppRun<A, M> {
  /** The app's per-run database. */
  db: TestDatabase
  /** A tap on the run's exchange with the keys of `AppRunOptions.tap`. */
  tap: TapQueue
  exchange: string
  queuePrefix: string
  /** The booted app. @throws when `AppRunOptions.boot` was not given */
  app: A
  /** The upstream publisher. @throws when `AppRunOptions.upstream` was not given */
  upstream: Upstream<M>
  /**
   * The app's environment: DATABASE_URL, AMQP_URL, AMQP_EXCHANGE, AMQP_QUEUE_PREFIX and
   * LOG_LEVEL=silent, with `extra` on top.
   */
  env(extra?: Record<string, string>): Record<string, string>
}

/**
 * The whole-app fixture of a service: a per-run database, per-run exchange and queue prefix, a tap
 * on the exchange, the app booted by `options.boot` and, with `options.upstream`, an upstream
 * publisher. Call it at the top of a test file or inside a `describe`: it registers the set-up and
 * the tear-down (upstream, app, tap, broker objects by the run's names, database). Returns a getter
 * for the fixture, valid inside the tests.
 */
export function useAppRun<A extends { close(): Promise<unknown> }, Tx = never, D = never, M = never>(
  options: AppRunOptions<A, Tx, D, M>,
): () => AppRun<A, M> {
  const exchange = uniqueName(`${options.service}_app_events`)
  const queuePrefix = uniqueName(`${options.service}_app`)
  let db: TestDatabase | undefined
  let tap: TapQueue | undefined
  let app: A | undefined
  let upstream: Upstream<M> | undefined
  const env = (extra: Record<string, string> = {}): Record<string, string> => {
    if (db === undefined) throw new Error('useAppRun: the fixture is only set inside tests')
    const base = { DATABASE_URL: db.url, AMQP_URL, AMQP_EXCHANGE: exchange, AMQP_QUEUE_PREFIX: queuePrefix }
    return { ...base, LOG_LEVEL: 'silent', ...extra }
  }

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: `${options.service}_app` })
    tap = await tapQueue(AMQP_URL, exchange, options.tap)
    if (options.boot) app = await options.boot(env())
    const prefix = `${options.service}_upstream`
    if (options.upstream) upstream = await startUpstream({ ...options.upstream, exchange, prefix })
  })

  afterAll(async () => {
    await upstream?.close()
    await app?.close()
    await tap?.delete()
    await deleteBrokerObjects({ exchanges: [exchange], prefix: queuePrefix })
    await db?.drop()
  })

  return () => {
    if (db === undefined || tap === undefined)
      throw new Error('useAppRun: the fixture is only set inside tests')
    return {
      db,
      tap,
      exchange,
      queuePrefix,
      env,
      get app(): A {
        if (app === undefined) throw new Error('useAppRun: no app, `boot` was not given')
        return app
      },
      get upstream(): Upstream<M> {
        if (upstream === undefined) throw new Error('useAppRun: no upstream, `upstream` was not given')
        return upstream
      },
    }
  }
}

/**
 * Resolves `app` (a fastify instance, or the promise of one) once its `ready()` has resolved; e.g.
 * `whenReady(buildApp(loadConfig(env), { fastify: { logger: false } }))`.
 */
export async function whenReady<A extends { ready(): PromiseLike<unknown> }>(app: Promise<A>): Promise<A> {
  const built = await app
  await built.ready()
  return built
}
