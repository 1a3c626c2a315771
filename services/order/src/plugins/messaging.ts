import {
  createMessaging,
  prismaDatabase,
  type HandlerDefinition,
  type Messaging,
  type RecorderDefinition,
} from '@saga/messaging'
import { messagingSettings, TRANSACTION_LIMITS } from '@saga/service-kit'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { Tx } from './db.js'

declare module 'fastify' {
  interface FastifyInstance {
    messaging: Messaging<Tx>
  }
}

/** Options of the messaging plugin: the config, and the handlers and recorders from src/reactions/index.ts. */
export interface MessagingPluginOptions {
  config: Config
  handlers: ReadonlyArray<HandlerDefinition<Tx>>
  recorders?: ReadonlyArray<RecorderDefinition>
}

/**
 * The outbox relay and the inbox consumers of the order service. `start()` never throws because the
 * broker is down (it keeps reconnecting; /health/ready says so). preClose stops consuming and drains
 * in-flight handlers and the relay batch before the db plugin closes the pool.
 */
export const messagingPlugin = fp(
  async (app: FastifyInstance, { config, handlers, recorders }: MessagingPluginOptions) => {
    const messaging = createMessaging<Tx>({
      service: 'order',
      queuePrefix: config.AMQP_QUEUE_PREFIX,
      database: prismaDatabase(app.prisma, TRANSACTION_LIMITS),
      pool: app.pool,
      amqpUrl: config.AMQP_URL,
      exchange: config.AMQP_EXCHANGE,
      handlers,
      recorders,
      logger: app.log,
      ...messagingSettings(config),
    })
    app.decorate('messaging', messaging)
    await messaging.start()
    app.addHook('preClose', async () => {
      await messaging.stop()
    })
  },
  { name: 'messaging', dependencies: ['db'], fastify: '5.x' },
)
