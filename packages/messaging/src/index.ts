/**
 * The transactional outbox, its relay, and the inbox consumer, for PostgreSQL and RabbitMQ.
 *
 * The root is what a service needs, and no more: `createMessaging` (relay, consumers, health,
 * metrics), `enqueue` (an event in the caller's transaction), `firstEvent`/`nextEvent` (the event a
 * request or a handled message leads to), a `Database` (`pgDatabase`, the default, or
 * `prismaDatabase`), and the types a handler's signature names. Each name is exported from one entry
 * point only: the option sub-shapes, the remaining errors, the health, metric and signal types and
 * the parts `createMessaging` is made of come from `@saga/messaging/parts`; the fastify plugin from
 * `@saga/messaging/fastify`; test helpers from `@saga/messaging/testing`.
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
