/**
 * @saga/messaging/fastify: messaging as a fastify plugin. The
 * service keeps only its typed augmentation (`messaging: Messaging<Tx>` on FastifyInstance), since
 * the transaction client type is the service's own. Types only from fastify: the package has no
 * runtime dependency on it (fastify is an optional peer).
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginOptions } from 'fastify'
import { createMessaging, type MessagingOptions } from '../messaging.js'
import type { TransactionClient } from '../types.js'

/**
 * Marks `plugin` as fastify-plugin would, without depending on it: `skip-override` (fastify
 * registers it in the parent's context, so the `messaging` decorator is visible outside, i.e. not
 * encapsulated), its display name, and `plugin-meta` (the name other plugins list as a dependency,
 * the plugins it depends on, the fastify versions it supports; fastify checks both at registration).
 */
function pluginMeta<Options extends FastifyPluginOptions>(
  plugin: FastifyPluginAsync<Options>,
  meta: { name: string; dependencies: string[]; fastify: string },
): FastifyPluginAsync<Options> {
  return Object.assign(plugin, {
    [Symbol.for('skip-override')]: true,
    [Symbol.for('fastify.display-name')]: meta.name,
    [Symbol.for('plugin-meta')]: meta,
  })
}

/**
 * Creates the messaging of the service (outbox relay, inbox consumers), decorates `app.messaging`
 * and starts it. `start()` never throws because the broker is down (it keeps reconnecting and
 * `health()` says so). In `preClose`, before the database plugin's `onClose` ends the pool, it stops
 * consuming and drains in-flight handlers and the relay's batch. Named `messaging`; depends on the
 * plugin named `db`, which provides the pool and the transaction client. Options: `createMessaging`'s,
 * `logger` defaulting to the app's. Not encapsulated: the decorator is visible to the app.
 */
export const messagingPlugin = pluginMeta<MessagingOptions<TransactionClient>>(
  async (app: FastifyInstance, options) => {
    const messaging = createMessaging({ logger: app.log, ...options })
    app.decorate('messaging', messaging)
    await messaging.start()
    app.addHook('preClose', async () => {
      await messaging.stop()
    })
  },
  { name: 'messaging', dependencies: ['db'], fastify: '5.x' },
)
