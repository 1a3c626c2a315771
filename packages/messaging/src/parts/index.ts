/**
 * @saga/messaging/parts: what `createMessaging` is made of, for a service that composes its own
 * (a relay-only worker, a consumer on a connection it shares, topology exported for infrastructure).
 * Each part documents its options; `createMessaging` shows how they fit together.
 */
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
