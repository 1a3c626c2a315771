import { createMessaging, prismaDatabase, type HandlerDefinition, type Messaging } from '@saga/messaging'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../config.js'
import type { Tx } from './db.js'

declare module 'fastify' {
  interface FastifyInstance {
    messaging: Messaging<Tx>
  }
}

/** Options of the messaging plugin: the config and the handlers from src/reactions/index.ts. */
export interface MessagingPluginOptions {
  config: Config
  handlers: ReadonlyArray<HandlerDefinition<Tx>>
}

/**
 * The outbox relay and the inbox consumers of the inventory service. `start()` never throws because the
 * broker is down (it keeps reconnecting; /health/ready says so). preClose stops consuming and drains
 * in-flight handlers and the relay batch before the db plugin closes the pool.
 */
export const messagingPlugin = fp(
  async (app: FastifyInstance, { config, handlers }: MessagingPluginOptions) => {
    const messaging = createMessaging<Tx>({
      service: 'inventory',
      queuePrefix: config.AMQP_QUEUE_PREFIX,
      // Routes and handlers alike wait at most 5 s for a connection (= the pool's connectionTimeoutMillis),
      // then fail with P2028, which the error handler answers 503 + Retry-After; a transaction that
      // runs longer than 10 s is rolled back.
      database: prismaDatabase(app.prisma, { maxWaitMs: 5_000, timeoutMs: 10_000 }),
      pool: app.pool,
      amqpUrl: config.AMQP_URL,
      exchange: config.AMQP_EXCHANGE,
      handlers,
      logger: app.log,
      relay: {
        batchSize: config.OUTBOX_BATCH_SIZE,
        pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
        publishTimeoutMs: config.OUTBOX_PUBLISH_TIMEOUT_MS,
        maxAttempts: config.OUTBOX_MAX_ATTEMPTS,
        retentionMs: config.OUTBOX_RETENTION_MS,
      },
      consumer: {
        prefetch: config.CONSUMER_PREFETCH,
        maxAttempts: config.CONSUMER_MAX_ATTEMPTS,
        // Unset: 40 % of the pool, so handler transactions never take every connection from HTTP.
        concurrency: config.CONSUMER_CONCURRENCY,
      },
      readyMaxOutboxAgeMs: config.READY_MAX_OUTBOX_AGE_MS,
    })
    app.decorate('messaging', messaging)
    await messaging.start()
    app.addHook('preClose', async () => {
      await messaging.stop()
    })
  },
  { name: 'messaging', dependencies: ['db'], fastify: '5.x' },
)
