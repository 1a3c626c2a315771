export { uniqueName } from './names.js'
export {
  createMigratedDatabase,
  createTestDatabase,
  dropDatabaseWhenIdle,
  POSTGRES_URL,
  type MigratedDatabase,
  type MigratedDatabaseOptions,
  type TestDatabase,
  type TestDatabaseOptions,
} from './database.js'
export { TcpProxy, type ProxyDirection } from './tcp-proxy.js'
export { tapQueue, type TapQueue, type TappedMessage } from './tap-queue.js'
export { deleteBrokerObjects, AMQP_URL, type BrokerCleanup } from './broker.js'
export {
  startServiceUnderTest,
  type InjectableApp,
  type ReadyBody,
  type ServiceUnderTest,
} from './service-under-test.js'
export { describeServiceHealth } from './health-suite.js'
export {
  AT,
  LATER,
  useShiftedTimeZones,
  type MessagingModels,
  type ShiftedTimeZones,
  type ShiftedTimeZonesOptions,
} from './time-zone.js'
export {
  clientModule,
  operationsOf,
  typecheckHeyApiTypes,
  typecheckOpenApiClient,
  type DocumentedOperation,
} from './openapi.js'
export { describeApiDocument, type ApiDocumentExpectations } from './openapi-suite.js'
export {
  startUpstream,
  useAppRun,
  whenReady,
  type AppRun,
  type AppRunOptions,
  type MessagingModule,
  type Upstream,
  type UpstreamOptions,
} from './app-run.js'
export { describeCancellationsMigration, describeMessagingMigration } from './messaging-migration.js'
export { useFixture, type FixtureHooks } from './fixture.js'
export { freePort } from './ports.js'
export { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js'
export { PRIVATE_RABBITMQ_HOOKS, startPrivateRabbitmq, type PrivateRabbitmq } from './private-rabbitmq.js'
export { eventually } from './eventually.js'
export { installPackedExample, readmeQuickStart, type PackedExample } from './packed-example.js'
