/**
 * The transactional outbox, its relay, and the inbox consumer, for PostgreSQL and RabbitMQ. The root
 * is what a service needs: `createMessaging`, `enqueue`, `firstEvent`/`nextEvent`, a `Database`
 * (`pgDatabase`, the default, or `prismaDatabase`) and the types a handler's signature names. Each
 * name has one entry point: the rest is in `@saga/messaging/parts`, the fastify plugin in
 * `@saga/messaging/fastify`, test helpers in `@saga/messaging/testing`.
 */
export { createMessaging, type Messaging, type MessagingOptions } from './messaging.js'
export { enqueue, InvalidMessageError } from './outbox/enqueue.js'
export { firstEvent, nextEvent, type ReactionDeps } from './inbox/follow-up.js'
export { pgDatabase, prismaDatabase } from './database.js'
export type {
  ConsumedMessage,
  Database,
  HandlerDefinition,
  MessageContract,
  TransactionClient,
} from './types.js'
