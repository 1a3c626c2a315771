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
 * Marks `plugin` as fastify-plugin would, without depending on it: `skip-override` (not
 * encapsulated), its display name, and `plugin-meta` (name, dependencies, fastify versions).
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
 * Creates the messaging of the service, decorates `app.messaging` and starts it (never throws
 * because the broker is down). In `preClose`, before the `db` plugin ends the pool, stops consuming
 * and drains handlers and the relay's batch. Named `messaging`, depends on `db`; options:
 * `createMessaging`'s, `logger` defaulting to the app's. Not encapsulated.
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
