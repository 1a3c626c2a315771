import type { FastifyInstance } from 'fastify'
import { MessagingAdminError, type MessagingAdmin } from '../admin.js'
import type { BulkFilter, BulkKind } from '../bulk.js'
import type { BulkJob } from '../bulk-jobs.js'
import { adminActor, adminRole, type adminWriteGuard } from './admin-guard.js'
import { schema, text, uuid } from './route-schema.js'

/** Most items one bulk job acts on, and most items a second. */
export const MAX_BULK_LIMIT = 100_000
export const MAX_BULK_RATE = 1_000

const dateTime = { type: 'string', format: 'date-time' } as const

/** The bulk filter (see `BulkFilter`): unknown fields refused. */
const filterSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    handler: text(200),
    type: text(200),
    reason: text(500),
    since: dateTime,
    until: dateTime,
  },
} as const

const bulkBody = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'filter'],
  properties: {
    kind: { type: 'string', enum: ['requeue', 'discard', 'retry'] },
    filter: filterSchema,
    dryRun: { type: 'boolean', default: false },
    limit: { type: 'integer', minimum: 1, maximum: MAX_BULK_LIMIT, default: 1_000 },
    ratePerSecond: { type: 'integer', minimum: 1, maximum: MAX_BULK_RATE, default: 50 },
  },
} as const

interface BulkBody {
  kind: BulkKind
  filter: BulkFilter
  dryRun: boolean
  limit: number
  ratePerSecond: number
}

const jobParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: uuid },
} as const

/** The job `id` of `admin`. @throws MessagingAdminError 404 when the admin does not know it */
function known(job: BulkJob | undefined, id: string): BulkJob {
  if (job) return job
  throw new MessagingAdminError(404, `no bulk job ${id} (jobs live in the process that started them)`, [
    { path: 'params.id', issue: 'is not a bulk job of this process' },
  ])
}

/**
 * The bulk routes under the admin prefix: POST `bulk` (a dry run answers 200 with the count and a
 * sample; a run answers 202 with the job), GET `bulk/:id` (the job's progress) and POST
 * `bulk/:id/stop`. The POSTs are behind `onRequest` (the write guard).
 */
export function bulkRoutes(
  app: FastifyInstance,
  admin: MessagingAdmin,
  onRequest: ReturnType<typeof adminWriteGuard>,
): void {
  const { service } = admin
  app.post<{ Body: BulkBody }>(
    '/bulk',
    {
      onRequest,
      schema: schema(
        'startBulk',
        'Dry run or start a bulk requeue, discard or retry by filter',
        { body: bulkBody },
        true,
      ),
    },
    async (request, reply) => {
      const { kind, filter, dryRun, limit, ratePerSecond } = request.body
      if (dryRun) return { service, dryRun, ...(await admin.bulkPreview(kind, filter)) }
      const actor = adminActor(request)
      const job = await admin.bulkStart({
        kind,
        filter,
        limit,
        ratePerSecond,
        actor,
        role: adminRole(request),
      })
      request.log.info(
        { actor, jobId: job.id, action: job.action, filter },
        'messaging admin bulk job started',
      )
      return reply.code(202).send({ service, dryRun, job })
    },
  )
  app.get<{ Params: { id: string } }>(
    '/bulk/:id',
    { schema: schema('getBulk', "A bulk job's progress", { params: jobParams }) },
    (request) => ({ service, job: known(admin.bulkJob(request.params.id), request.params.id) }),
  )
  app.post<{ Params: { id: string } }>(
    '/bulk/:id/stop',
    {
      onRequest,
      schema: schema('stopBulk', 'Stop a bulk job after its batch in flight', { params: jobParams }, true),
    },
    (request) => ({ service, job: known(admin.bulkStop(request.params.id), request.params.id) }),
  )
}
