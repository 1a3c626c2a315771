/**
 * @saga/messaging: the transactional outbox, its relay, and the inbox consumer, for PostgreSQL and
 * RabbitMQ. Most services need only `createMessaging`, `enqueue`, `prismaDatabase` and `followUp`.
 */
export type * from './types.js'

export { createSignals, SignalTimeoutError, type Signals, type SignalListener } from './signals.js'
export {
  prismaDatabase,
  pgDatabase,
  NotInTransactionError,
  type PrismaClientLike,
  type PrismaDatabaseOptions,
} from './database.js'
export { createAmqpConnection, type AmqpConnection, type AmqpConnectionOptions } from './amqp/connection.js'

export {
  declareTopology,
  topologyDefinitions,
  queueName,
  deadLetterQueueName,
  TopologyError,
  type TopologySpec,
  type TopologyDefinitions,
} from './topology.js'
export {
  createConsumer,
  type Consumer,
  type ConsumerOptions,
  type ConsumerHealth,
  type ConsumerMetrics,
} from './inbox/consumer.js'
export type { HandlerCounters } from './inbox/handle-delivery.js'
export { followUp, childTraceparent, type FollowUpContext } from './inbox/follow-up.js'
