import { type HandlerDefinition, type Messaging, type ReactionDeps } from '@saga/messaging'
import { messagingPlugin } from '@saga/messaging/fastify'
import { type RecorderDefinition } from '@saga/messaging/parts'
import { createMessagingAdmin } from '@saga/messaging-admin'
import { messagingAdminPlugin } from '@saga/messaging-admin/fastify'
import type pg from 'pg'
import { createServiceApp, type ServiceApp, type ServiceAppOptions } from './app.js'
import { databasePlugin, type DatabaseDefinition, type DisconnectableClient } from './database-plugin.js'
import type { BaseServiceConfig, ServiceName } from './env.js'
import { databaseCheck, healthPlugin, messagingChecks } from './health.js'
import { messagingOptions } from './messaging-settings.js'
import { metricsPlugin } from './metrics.js'
import { overloadOptions, overloadPlugin } from './overload.js'
import { schemaCheck } from './schema-check.js'

/**
 * What a saga service's reactions write in: a pooled pg client inside BEGIN (`pgDatabase(app.pool)`),
 * so the per-message path (inbox INSERT, the reaction's statements, outbox INSERT) runs without
 * Prisma. Routes read through Prisma (`app.prisma`).
 */
export type SagaTransaction = pg.PoolClient

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's messaging (`sagaService`), its transactions on `app.pool` (`SagaTransaction`). */
    messaging: Messaging<SagaTransaction>
  }
}

/**
 * A step of `sagaService` that registers what is the service's own on the app; `deps` are the ones
 * its reactions get (`logger`, `clock`, and the service's own), so routes and schedulers share the
 * clock.
 */
export type SagaServiceStep = (app: ServiceApp, deps: ReactionDeps) => Promise<void>

/** Options of `sagaService`: what differs between the services of the saga. */
export interface SagaServiceOptions<Extra extends object> {
  /** The service's name: its logs, OpenAPI title, pool `application_name`, queues and `saga_service` label. */
  service: ServiceName
  /** The service's parsed config (database, AMQP, relay, consumer, overload and log settings). */
  config: BaseServiceConfig
  /** Extra fastify options (tests pass `{ logger: false }`). */
  fastify?: ServiceAppOptions['fastify']
  /**
   * The service's database (`databasePlugin`'s options but the name): its prisma/migrations folder,
   * applied on start when MIGRATE_ON_START and required by the readiness check `schema`, and its
   * Prisma client factory.
   */
  database: DatabaseDefinition<DisconnectableClient>
  /** What reactions and recorders get besides `logger` (the app's) and `clock` (`() => new Date()`). */
  deps?: Extra
  /** The service's reactions (src/reactions/index.ts), one handler and queue each. */
  reactions: (deps: ReactionDeps & Extra) => ReadonlyArray<HandlerDefinition<SagaTransaction>>
  /** Its batch recorders, for facts it only records. Default none. */
  recorders?: (deps: ReactionDeps & Extra) => ReadonlyArray<RecorderDefinition>
  /** Registered after the database and overload plugins, before messaging starts (e.g. a seed). */
  beforeMessaging?: SagaServiceStep | undefined
  /** Registered after messaging, before health and metrics (e.g. a scheduler writing through messaging). */
  afterMessaging?: SagaServiceStep | undefined
  /** Registered last, after `/metrics` (so `app.metricsRegistry` exists): the service's routes. */
  routes: SagaServiceStep
}

/** Test hooks of a service's `buildApp`: extra fastify options (tests pass `{ logger: false }`). */
export interface SagaAppOptions {
  fastify?: ServiceAppOptions['fastify']
}

/** What a service gives `sagaApp`: `sagaService`'s options but the config and the test hooks. */
export type SagaServiceDefinition<Extra extends object> = Omit<
  SagaServiceOptions<Extra>,
  'config' | 'fastify'
>

/**
 * A service's `buildApp(config, options?)`: `define(config)` says what is the service's own (its name,
 * database, reactions, routes...) and the app is `sagaService` of that with `config` and the test
 * hooks (`SagaAppOptions`).
 */
export function sagaApp<Config extends BaseServiceConfig, Extra extends object = Record<never, never>>(
  define: (config: Config) => SagaServiceDefinition<Extra>,
): (config: Config, options?: SagaAppOptions) => Promise<ServiceApp> {
  return (config, options = {}) => sagaService({ ...define(config), config, fastify: options.fastify })
}

/**
 * A service of the saga as a fastify app, built from what differs between services and registered
 * in load order:
 * 1. `createServiceApp` (logger, request ids, validation, the error handler, OpenAPI);
 * 2. the `db` plugin (`databasePlugin`: pg pool, migrations when MIGRATE_ON_START, the Prisma client);
 * 3. the overload plugin, before every route, so an overloaded instance sheds writes with 503 +
 *    Retry-After (docs/operations.md, "Overload");
 * 4. `beforeMessaging`;
 * 5. messaging (`messagingOptions`: relay and consumers, transactions on `pgDatabase(app.pool)`) with
 *    `reactions(deps)` and `recorders(deps)`, `deps` being `{ logger, clock, ...options.deps }`;
 * 6. `afterMessaging`;
 * 7. health: `database`, `schema` (not ready against a schema older than this build, i.e. before the
 *    migrate step ran) and messaging's areas;
 * 8. `/metrics` with messaging's descriptors;
 * 9. the messaging admin surface under `/admin/messaging` (`@saga/messaging-admin`, built from the
 *    messaging options, its broker connection closed in `onClose`; writes need `ADMIN_TOKEN` as
 *    bearer, read-only without it);
 * 10. `routes`.
 * Tests build it and `inject`; the server hosts it (`runServer`).
 * @throws MigrationError when MIGRATE_ON_START and a migration fails; whatever a step throws
 */
export async function sagaService<Extra extends object = Record<never, never>>(
  options: SagaServiceOptions<Extra>,
): Promise<ServiceApp> {
  const { service, config } = options
  const app = await createServiceApp({
    service,
    logLevel: config.LOG_LEVEL,
    logFormat: config.LOG_FORMAT,
    fastify: options.fastify,
  })
  await app.register(databasePlugin({ service, ...options.database }), { config })
  await app.register(overloadPlugin, overloadOptions(config, app.pool))
  const deps = { logger: app.log, clock: () => new Date(), ...options.deps } as ReactionDeps & Extra
  await options.beforeMessaging?.(app, deps)
  // One options object for messaging and its admin, which names the same queues.
  const messaging = messagingOptions(config, {
    service,
    // No database: messaging's own pgDatabase over the pool, whose rows it publishes on commit.
    pool: app.pool,
    handlers: options.reactions(deps),
    recorders: options.recorders?.(deps),
  })
  await app.register(messagingPlugin, messaging)
  await options.afterMessaging?.(app, deps)
  await app.register(healthPlugin, {
    checks: [
      databaseCheck(app.pool),
      schemaCheck(app.pool, options.database.migrationsDir),
      ...messagingChecks(app.messaging),
    ],
  })
  await app.register(metricsPlugin, { service, metrics: app.messaging.metrics })
  const admin = createMessagingAdmin({ logger: app.log, ...messaging })
  app.addHook('onClose', () => admin.close())
  await app.register(messagingAdminPlugin, { admin, token: config.ADMIN_TOKEN })
  await options.routes(app, deps)
  return app
}
