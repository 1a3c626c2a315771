import AjvCompiler from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifySchema } from 'fastify'
import type { MessagingAdmin } from '../admin.js'
import { adminActor, adminRole, adminWriteGuard, type AdminAccessOptions } from './admin-guard.js'
import { bulkRoutes } from './bulk-routes.js'
import { limit, query, schema, text, uuid } from './route-schema.js'

type AdminGuard = ReturnType<typeof adminWriteGuard>

/** Options of `messagingAdminPlugin`. */
export interface MessagingAdminPluginOptions extends AdminAccessOptions {
  /** The service's admin: `createMessagingAdmin(options)`. The plugin does not close it. */
  admin: MessagingAdmin
  /** Where the routes are mounted. Default `/admin/messaging`. */
  routePrefix?: string
}

// The plugin's own validator (JSON Schema, ajv with formats), whatever compiler the host app uses:
// unknown fields refused (not silently removed), all problems reported at once on these small inputs.
const ajv = AjvCompiler()(
  {},
  {
    customOptions: { coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: true },
  },
)

const moveBody = {
  type: 'object',
  additionalProperties: false,
  required: ['queue', 'messageIds'],
  properties: {
    queue: text(255),
    messageIds: { type: 'array', minItems: 1, maxItems: 500, items: text(200) },
    dryRun: { type: 'boolean', default: false },
  },
} as const

interface MoveBody {
  queue: string
  messageIds: string[]
  dryRun: boolean
}

/** GET routes: open like the services' other reads. */
function readRoutes(app: FastifyInstance, admin: MessagingAdmin): void {
  const { service } = admin
  app.get('/summary', { schema: schema('messagingSummary', 'Outbox and queue counts now') }, () =>
    admin.summary(),
  )
  app.get<{ Querystring: { aggregateId: string } }>(
    '/records',
    {
      schema: schema(
        'messagingRecords',
        'Outbox rows of one aggregate',
        query({ aggregateId: text(200) }, ['aggregateId']),
      ),
    },
    async (request) => ({ service, outbox: await admin.records(request.query.aggregateId) }),
  )
  const messageIds = { messageId: { type: 'array', minItems: 1, maxItems: 200, items: uuid } }
  app.get<{ Querystring: { messageId: string[] } }>(
    '/inbox',
    {
      schema: schema(
        'messagingInbox',
        'Which handlers consumed these messages, when',
        query(messageIds, ['messageId']),
      ),
    },
    async (request) => ({ service, inbox: await admin.inbox(request.query.messageId) }),
  )
  const letters = { aggregateId: text(200), queue: text(255), limit: limit(1_000, 100) }
  app.get<{ Querystring: { aggregateId?: string; queue?: string; limit: number } }>(
    '/dead-letters',
    { schema: schema('listDeadLetters', 'Dead letters, browsed without consuming them', query(letters)) },
    async (request) => ({ service, queues: await admin.deadLetters(request.query) }),
  )
  const parked = { aggregateId: text(200), limit: limit(1_000, 100) }
  app.get<{ Querystring: { aggregateId?: string; limit: number } }>(
    '/parked',
    { schema: schema('listParked', 'Parked outbox rows, oldest parked first', query(parked)) },
    async (request) => ({ service, rows: await admin.parked(request.query) }),
  )
  const stuck = { handler: text(200), limit: limit(1_000, 100) }
  app.get<{ Querystring: { handler?: string; limit: number } }>(
    '/ordered-keys',
    { schema: schema('listStuckKeys', 'Ordered keys blocked by a dead letter or with a gap', query(stuck)) },
    async (request) => ({ service, keys: await admin.stuckKeys(request.query) }),
  )
  app.get<{ Querystring: { limit: number } }>(
    '/actions',
    {
      schema: schema(
        'listAdminActions',
        'Recorded admin actions, newest first',
        query({ limit: limit(500, 50) }),
      ),
    },
    async (request) => ({ service, actions: await admin.actions(request.query.limit) }),
  )
}

/** GET /records/find: the outbox row of a message id, or the rows of a trace id (exactly one of the two). */
function findRoute(app: FastifyInstance, admin: MessagingAdmin): void {
  const sought: FastifySchema = {
    querystring: {
      type: 'object',
      additionalProperties: false,
      properties: { messageId: uuid, traceId: { type: 'string', pattern: '^[0-9a-fA-F]{32}$' } },
      oneOf: [{ required: ['messageId'] }, { required: ['traceId'] }],
    },
  }
  app.get<{ Querystring: { messageId: string } | { traceId: string } }>(
    '/records/find',
    {
      schema: schema('findRecords', 'The outbox row of a message id, or the rows of a W3C trace id', sought),
    },
    async (request) => ({ service: admin.service, outbox: await admin.find(request.query) }),
  )
}

const retryBody = {
  type: 'object',
  additionalProperties: false,
  required: ['ids'],
  properties: {
    ids: { type: 'array', minItems: 1, maxItems: 500, items: uuid },
    dryRun: { type: 'boolean', default: false },
  },
} as const

const skipBody = {
  type: 'object',
  additionalProperties: false,
  required: ['handler', 'producer', 'key'],
  properties: {
    handler: text(200),
    producer: text(200),
    key: text(500),
    dryRun: { type: 'boolean', default: false },
  },
} as const

/** POST routes: behind `adminWriteGuard` (as `onRequest`, so refused before the body is read). */
function writeRoutes(app: FastifyInstance, admin: MessagingAdmin, onRequest: AdminGuard): void {
  app.post<{ Body: MoveBody }>(
    '/dead-letters/requeue',
    {
      onRequest,
      schema: schema('requeueDeadLetters', 'Requeue dead letters to their handler', { body: moveBody }, true),
    },
    (request) => {
      const { queue, messageIds, dryRun } = request.body
      return admin.requeue(queue, messageIds, {
        actor: adminActor(request),
        role: adminRole(request),
        dryRun,
      })
    },
  )
  app.post<{ Body: MoveBody }>(
    '/dead-letters/discard',
    {
      onRequest,
      schema: schema('discardDeadLetters', 'Discard dead letters for good', { body: moveBody }, true),
    },
    (request) => {
      const { queue, messageIds, dryRun } = request.body
      return admin.discard(queue, messageIds, {
        actor: adminActor(request),
        role: adminRole(request),
        dryRun,
      })
    },
  )
  app.post<{ Body: { handler: string; producer: string; key: string; dryRun: boolean } }>(
    '/ordered-keys/skip',
    {
      onRequest,
      schema: schema('skipOrderedKey', 'Skip what holds an ordered key back', { body: skipBody }, true),
    },
    (request) => {
      const { dryRun, ...target } = request.body
      return admin.skipOrdered(target, { actor: adminActor(request), role: adminRole(request), dryRun })
    },
  )
  app.post<{ Body: { ids: string[]; dryRun: boolean } }>(
    '/parked/retry',
    {
      onRequest,
      schema: schema('retryParked', 'Make parked outbox rows pending again', { body: retryBody }, true),
    },
    (request) => {
      const { ids, dryRun } = request.body
      return admin.retryParked(ids, { actor: adminActor(request), role: adminRole(request), dryRun })
    },
  )
}

/**
 * The messaging admin surface of one service as fastify routes, under `/admin/messaging` (see
 * this package's README.md, "Routes"): GET `summary`, `records?aggregateId=`,
 * `inbox?messageId=…`, `dead-letters`, `parked`, `ordered-keys`, `actions`, `bulk/:id`; POST
 * `dead-letters/requeue`, `dead-letters/discard`, `ordered-keys/skip`, `parked/retry`, `bulk`,
 * `bulk/:id/stop` (guarded by `adminWriteGuard(options)`). Inputs are
 * validated with the routes' JSON Schemas by the plugin's own ajv; errors (validation, 4xx of the
 * guard and the admin) carry `statusCode` for the app's error handler. Not wrapped with
 * fastify-plugin: its validator stays inside.
 * @throws RangeError at registration when `token` is shorter than 16 characters
 */
export async function messagingAdminPlugin(
  app: FastifyInstance,
  options: MessagingAdminPluginOptions,
): Promise<void> {
  const { admin, routePrefix = '/admin/messaging', token } = options
  const guard = adminWriteGuard({ token })
  await app.register(
    (scope: FastifyInstance) => {
      scope.setValidatorCompiler(ajv)
      // The response schemas document the answers; the bodies are serialised as they are.
      scope.setSerializerCompiler(() => (data) => JSON.stringify(data))
      readRoutes(scope, admin)
      findRoute(scope, admin)
      writeRoutes(scope, admin, guard)
      bulkRoutes(scope, admin, guard)
      return Promise.resolve()
    },
    { prefix: routePrefix },
  )
}
