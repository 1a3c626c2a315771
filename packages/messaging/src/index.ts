/**
 * The transactional outbox, its relay, and the inbox consumer, for PostgreSQL and RabbitMQ.
 *
 * A service needs `createMessaging` (relay, consumers, health, metrics), `enqueue` (an event in the
 * caller's transaction), `firstEvent`/`nextEvent` (the event a request or a handled message leads
 * to), a `Database` (`pgDatabase`, the default, or `prismaDatabase`), and the types of its handlers.
 * The parts underneath (the relay, the consumer, the queue channel, the topology) are exported from
 * `@saga/messaging/parts` for services that compose their own; the fastify plugin from
 * `@saga/messaging/fastify`; test helpers from `@saga/messaging/testing`.
 */
export {
  createMessaging,
  type Messaging,
  type MessagingOptions,
  type MessagingRelayOptions,
  type MessagingConsumerOptions,
} from './messaging.js'
export { enqueue, InvalidMessageError, type EnqueueOptions } from './outbox/enqueue.js'
export {
  firstEvent,
  nextEvent,
  followUp,
  InvalidPayloadError,
  type EventOptions,
  type FirstEventOptions,
  type NextEventOptions,
  type FollowUpContext,
  type ReactionDeps,
} from './inbox/follow-up.js'
export {
  pgDatabase,
  prismaDatabase,
  NotInTransactionError,
  type PrismaClientLike,
  type PrismaDatabaseOptions,
  type PgDatabaseOptions,
} from './database.js'
export { TopologyError } from './topology.js'
export type { Signals, SignalListener } from './signals.js'
export type { HealthArea, HealthAreaName, HealthSettings, MessagingHealth } from './observability/health.js'
export type { HistogramMetric, MetricDescriptor, MetricSample, ValueMetric } from './observability/metrics.js'
export type { MessagingStats } from './observability/parts.js'
export type { RecorderDefinition, Queryable } from './recorder/types.js'
export type {
  ConsumedMessage,
  Database,
  Envelope,
  HandlerDefinition,
  InboxEntry,
  InboxOutcome,
  Logger,
  MessageContract,
  OutgoingMessage,
  PgClientLike,
  PrismaTransactionLike,
  SignalMap,
  SignalName,
  StandardSchemaV1,
  TransactionClient,
} from './types.js'
