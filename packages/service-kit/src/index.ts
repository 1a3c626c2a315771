/**
 * What every fastify service of the fleet shares. The package exports what the services, the fleet
 * and e2e use, with the types that spell those exports' signatures (so a service's own declarations
 * can name them); the rest stays inside it. Four more entry points: `@saga/service-kit/telemetry`
 * (`node --import` it to start OpenTelemetry), `@saga/service-kit/url-setting` (URL rules, for
 * the fleet's preflight), `@saga/service-kit/prisma-config` (a service's prisma.config.ts settings)
 * and `@saga/service-kit/testing` (the fixtures the services' tests share).
 */

// The app: fastify with the fleet's logger, request ids, error handler, JSON bodies and OpenAPI.
export { createServiceApp, type ServiceApp, type ServiceAppOptions } from './app.js'
export type { LogFormat } from './logger.js'

// A service of the saga: the app, its database, messaging, health, metrics and routes in load order.
export {
  sagaApp,
  sagaService,
  type SagaAppOptions,
  type SagaServiceDefinition,
  type SagaServiceOptions,
  type SagaServiceStep,
  type SagaTransaction,
} from './saga-service.js'

// Configuration: the environment every service parses, and messaging's options from it.
export {
  adminTokenSetting,
  EnvError,
  parseEnv,
  serviceEnvSchema,
  type BaseServiceConfig,
  type EnvIssue,
  type Environment,
  type ServiceEnvDefaults,
} from './env.js'
export { FLEET_MESSAGING_NAMES, messagingOptions, type ServiceMessaging } from './messaging-settings.js'

// HTTP: error bodies and their OpenAPI schemas, documented response headers, load shedding.
export { HttpError, type ErrorDetail } from './errors.js'
export {
  ClientErrorResponse,
  errorResponses,
  ServerErrorResponse,
  type ErrorStatus,
} from './error-schemas.js'
export { withHeaders, type ResponseHeader } from './openapi-headers.js'
export {
  overloadOptions,
  overloadPlugin,
  SPELL_QUIET_MS,
  type OverloadConfig,
  type OverloadOptions,
  type PoolLike,
} from './overload.js'

// The database: the pool plugin, migrations, and the check that the schema is migrated.
export {
  databasePlugin,
  type DatabaseConfig,
  type DatabaseDefinition,
  type DatabasePluginOptions,
  type DisconnectableClient,
} from './database-plugin.js'
export { serviceDatabase, type PrismaClientClass, type ServiceDatabase } from './service-database.js'
export { runMigrations, type RunMigrationsOptions } from './migrate.js'
export { runMigrate, type RunMigrateOptions } from './run-migrate.js'
export { schemaCheck } from './schema-check.js'

// Health and metrics: `/health*` from checks, `/metrics` from prom-client.
export {
  databaseCheck,
  healthPlugin,
  messagingChecks,
  type CheckResult,
  type HealthAreaSource,
  type HealthOptions,
  type ReadinessCheck,
} from './health.js'
export { metricsPlugin, type MetricsOptions } from './metrics.js'
/** prom-client's Registry, for a service's own series on `app.metricsRegistry` (one prom-client copy). */
export { Registry } from 'prom-client'

// The process: listen, cluster workers, graceful shutdown.
export { runServer, type RunServerOptions, type ServerConfig } from './run-server.js'
