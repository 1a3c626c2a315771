/**
 * @saga/messaging/fastify: messaging as a fastify plugin. The
 * service keeps only its typed augmentation (`messaging: Messaging<Tx>` on FastifyInstance), since
 * the transaction client type is the service's own.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { createMessaging, type MessagingOptions } from '../messaging.js'
import type { TransactionClient } from '../types.js'

/** Options of `messagingPlugin`: `createMessaging`'s; `logger` defaults to the app's logger. */
export type MessagingPluginOptions<Tx extends TransactionClient = TransactionClient> = MessagingOptions<Tx>

/**
 * Creates the messaging of the service (outbox relay, inbox consumers), decorates `app.messaging`
 * and starts it. `start()` never throws because the broker is down (it keeps reconnecting and
 * `health()` says so). In `preClose`, before the database plugin's `onClose` ends the pool, it stops
 * consuming and drains in-flight handlers and the relay's batch. Named `messaging`; depends on the
 * plugin named `db`, which provides the pool and the transaction client.
 */
export const messagingPlugin = fp(
  async (app: FastifyInstance, options: MessagingPluginOptions) => {
    const messaging = createMessaging({ logger: app.log, ...options })
    app.decorate('messaging', messaging)
    await messaging.start()
    app.addHook('preClose', async () => {
      await messaging.stop()
    })
  },
  { name: 'messaging', dependencies: ['db'], fastify: '5.x' },
)

export { messagingAdminPlugin, type MessagingAdminPluginOptions } from './admin-plugin.js'
export {
  adminActor,
  adminWriteGuard,
  ADMIN_ACTOR_HEADER,
  MIN_ADMIN_TOKEN_LENGTH,
  type AdminAccessOptions,
} from './admin-guard.js'
export { recordAdminAction, type AdminAction, type AdminActionInput } from '../admin/actions.js'
export { MessagingAdminError } from '../admin/admin.js'
