/**
 * @saga/messaging: the transactional outbox, its relay, and the inbox consumer, for PostgreSQL and
 * RabbitMQ. Most services need only `createMessaging`, `enqueue`, `prismaDatabase` and `followUp`;
 * the parts below it are exported for services that compose their own.
 */
export type * from './types.js'

export {
  createMessaging,
  type Messaging,
  type MessagingOptions,
  type MessagingRelayOptions,
  type MessagingConsumerOptions,
  type MessagingHealth,
  type MessagingMetrics,
} from './messaging.js'
export { enqueue, InvalidMessageError } from './outbox/enqueue.js'
export { MESSAGING_METRIC_HELP } from './metrics-help.js'
export {
  followUp,
  nextEvent,
  childTraceparent,
  InvalidPayloadError,
  type FollowUpContext,
  type ReactionDeps,
} from './inbox/follow-up.js'
export {
  prismaDatabase,
  pgDatabase,
  NotInTransactionError,
  type PrismaClientLike,
  type PrismaDatabaseOptions,
} from './database.js'
export { createSignals, SignalTimeoutError, type Signals, type SignalListener } from './signals.js'

export { createRelay, type Relay, type RelayOptions } from './outbox/relay.js'
export type { RelayStats } from './outbox/stats.js'
export type { RetentionResult } from './outbox/retention.js'
export {
  createConsumer,
  type Consumer,
  type ConsumerOptions,
  type ConsumerHealth,
  type ConsumerMetrics,
} from './inbox/consumer.js'
export type { HandlerCounters } from './inbox/handle-delivery.js'
export { deliverToHandler } from './inbox/deliver-to-handler.js'
export type { RecorderDefinition, RecorderCounters, Queryable } from './recorder/types.js'
export { createBatchRecorder, type BatchRecorder, type BatchRecorderOptions } from './recorder/recorder.js'
export {
  declareTopology,
  topologyDefinitions,
  queueName,
  deadLetterQueueName,
  TopologyError,
  type TopologySpec,
  type TopologyDefinitions,
} from './topology.js'
export { createAmqpConnection, type AmqpConnection, type AmqpConnectionOptions } from './amqp/connection.js'
export { TimeoutError } from './amqp/timeout.js'
