export { createServiceApp, type ServiceApp, type ServiceAppOptions } from './app.js'
export { isDatabaseUnavailable } from '@saga/messaging/parts'
export { registerDatabaseMetrics, WATCHED_TABLES } from './database-metrics.js'
export {
  DEFAULT_SESSION_LIMITS,
  sessionConnection,
  type SessionConnection,
  type SessionLimits,
} from './database-session.js'
export {
  databasePlugin,
  type DatabaseConfig,
  type DatabasePluginOptions,
  type DisconnectableClient,
} from './database-plugin.js'
export {
  EnvError,
  localDatabaseUrl,
  parseEnv,
  serviceEnvSchema,
  type BaseServiceConfig,
  type EnvIssue,
  type Environment,
  type ServiceEnvDefaults,
  type ServiceName,
} from './env.js'
export {
  ClientErrorResponse,
  errorResponses,
  ServerErrorResponse,
  type ErrorStatus,
} from './error-schemas.js'
export { RESPONSE_HEADERS, withHeaders, type ResponseHeader } from './openapi-headers.js'
export {
  clientError,
  errorHandlerPlugin,
  HttpError,
  type ClientErrorBody,
  type ErrorDetail,
  type ServerErrorBody,
} from './errors.js'
export {
  databaseCheck,
  healthPlugin,
  messagingChecks,
  type HealthAreaSource,
  type CheckResult,
  type HealthOptions,
  type ReadinessBody,
  type ReadinessCheck,
} from './health.js'
export { chooseLogFormat, loggerOptions, type LogFormat, type LogFormatChoice } from './logger.js'
export {
  FLEET_MESSAGING_NAMES,
  messagingOptions,
  messagingSettings,
  type MessagingSettings,
  type ServiceMessaging,
} from './messaging-settings.js'
export { registerDescriptors } from './metric-descriptors.js'
export { metricsPlugin, type MetricsOptions } from './metrics.js'
/** prom-client's Histogram and Registry, for a service's own series on `app.metricsRegistry` (one prom-client copy). */
export { Histogram, Registry } from 'prom-client'
export {
  MIGRATION_LOCK_KEY,
  MigrationError,
  readMigrations,
  runMigrations,
  type MigrationFile,
  type RunMigrationsOptions,
} from './migrate.js'
export {
  OVERLOAD_DEFAULTS,
  overloadOptions,
  overloadPlugin,
  SPELL_QUIET_MS,
  type OverloadConfig,
  type OverloadOptions,
  type OverloadReason,
  type PoolLike,
} from './overload.js'
export { genReqId, REQUEST_ID_HEADER } from './request-id.js'
export { schemaCheck } from './schema-check.js'
export { runMigrate, type RunMigrateOptions } from './run-migrate.js'
export { runPrimary, SHUTDOWN_MESSAGE, type PrimaryOptions } from './cluster.js'
export { runServer, type RunServerOptions, type ServerConfig } from './run-server.js'
export { swaggerPlugin, type SwaggerOptions } from './swagger.js'
export { shutdownTelemetry } from './telemetry/state.js'
export { serviceNameOf, telemetryDefaults, telemetryEnabled } from './telemetry/settings.js'
