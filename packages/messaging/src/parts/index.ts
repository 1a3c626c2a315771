/**
 * @saga/messaging/parts: everything the root leaves out, for a service that composes its own (a
 * relay-only worker, a consumer on a connection it shares, topology exported for infrastructure) or
 * names a type the root does not: the option sub-shapes, the errors besides `InvalidMessageError`,
 * and the health, metric, signal and recorder types. Each part documents its options;
 * `createMessaging` shows how they fit together. No name here is also exported by the root.
 */

// Option sub-shapes and the types the root's signatures lead to.
export type { MessagingRelayOptions, MessagingConsumerOptions } from '../messaging.js'
export type { EnqueueOptions } from '../outbox/enqueue.js'
export {
  followUp,
  InvalidPayloadError,
  type EventOptions,
  type FirstEventOptions,
  type NextEventOptions,
  type FollowUpContext,
} from '../inbox/follow-up.js'
export {
  NotInTransactionError,
  type PrismaClientLike,
  type PrismaDatabaseOptions,
  type PgDatabaseOptions,
} from '../database.js'
export { TopologyError } from '../topology.js'
export { SqlResultError, SqlValueError } from '../sql.js'
export type { Signals, SignalListener } from '../signals.js'
export type { HealthArea, HealthAreaName, HealthSettings, MessagingHealth } from '../observability/health.js'
export type {
  HistogramMetric,
  MetricDescriptor,
  MetricSample,
  ValueMetric,
} from '../observability/metrics.js'
export type { MessagingStats } from '../observability/parts.js'
export type { RecorderDefinition, Queryable } from '../recorder/types.js'
export type {
  Envelope,
  InboxEntry,
  InboxOutcome,
  Logger,
  OutgoingMessage,
  PgClientLike,
  PrismaTransactionLike,
  SignalMap,
  SignalName,
  StandardSchemaV1,
  Upcaster,
} from '../types.js'

// The parts createMessaging is made of.
export { createRelay, type Relay, type RelayOptions } from '../outbox/relay.js'
export type { RelayStats } from '../outbox/stats.js'
export type { RetentionResult } from '../outbox/retention.js'
export {
  createConsumer,
  type Consumer,
  type ConsumerOptions,
  type ConsumerHealth,
  type ConsumerMetrics,
} from '../inbox/consumer.js'
export type { HandlerCounters } from '../inbox/handle-delivery.js'
export type { HandlerQueue } from '../inbox/handler-queue.js'
export { deliverToHandler } from '../inbox/deliver-to-handler.js'
export { childTraceparent } from '../inbox/follow-up.js'
export type { RecorderCounters } from '../recorder/types.js'
export { createBatchRecorder, type BatchRecorder, type BatchRecorderOptions } from '../recorder/recorder.js'
export {
  declareTopology,
  topologyDefinitions,
  queueName,
  deadLetterQueueName,
  type TopologySpec,
  type TopologyDefinitions,
} from '../topology.js'
export { splitBrokerUrls, firstAddress, type BrokerNode } from '../amqp/broker-addresses.js'
export {
  createAmqpConnection,
  redactUrl,
  type AmqpConnection,
  type AmqpConnectionOptions,
  type ConnectionState,
} from '../amqp/connection.js'
export {
  createQueueChannel,
  type ChannelSession,
  type QueueChannel,
  type QueueChannelOptions,
  type QueueChannelState,
} from '../amqp/queue-channel.js'
export { TimeoutError } from '../amqp/timeout.js'
export { createSignals, SignalTimeoutError } from '../signals.js'
export { messagingHealth } from '../observability/health.js'
export { messagingMetrics, type MetricSources } from '../observability/metrics.js'
export { messagingStats, type MessagingParts } from '../observability/parts.js'
export { isDatabaseUnavailable, isSessionEnded, isTransientDatabaseError } from '../database-errors.js'
export type { CommittedRow, CommittedRowSink } from '../database.js'
