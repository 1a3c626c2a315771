/**
 * @saga/messaging-admin/fastify: the admin routes as a fastify plugin (`messagingAdminPlugin`) and
 * the bearer-token guard of admin writes (`adminWriteGuard`, `adminActor`), which a service's own
 * admin routes use too.
 */
export { messagingAdminPlugin, type MessagingAdminPluginOptions } from './admin-plugin.js'
export {
  adminActor,
  adminRole,
  adminWriteGuard,
  ADMIN_ACTOR_HEADER,
  ADMIN_ROLE_HEADER,
  MIN_ADMIN_TOKEN_LENGTH,
  type AdminAccessOptions,
} from './admin-guard.js'
