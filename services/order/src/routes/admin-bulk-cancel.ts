import { BulkJobs, recordAdminAction, type BulkBatch, type BulkJob } from '@saga/messaging-admin'
import { adminActor, adminRole, adminWriteGuard } from '@saga/messaging-admin/fastify'
import { errorResponses, HttpError } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { noMetrics } from '../metrics.js'
import { QueryInstant, WaitingFor } from '../schemas.js'
import { countPending, oldestPending, type PendingFilters } from '../store/bulk-cancel.js'
import type { AdminOrderRoutesOptions } from './admin-cancel.js'
import { cancelByCustomer } from './cancel-order.js'

/** Which PENDING orders a bulk cancel takes (the orders list's filters); all given must hold. */
const BulkCancelFilter = z.strictObject({
  waitingFor: WaitingFor.optional().describe('Only orders waiting for this step'),
  placedAfter: QueryInstant.optional().describe('Only orders created at or after this instant'),
  placedBefore: QueryInstant.optional().describe('Only orders created before this instant'),
  deadlineBefore: QueryInstant.optional().describe('Only orders whose deadline passes before this instant'),
})
type BulkCancelFilter = z.infer<typeof BulkCancelFilter>

const BulkCancelBody = z.strictObject({
  filter: BulkCancelFilter,
  dryRun: z.boolean().default(false).describe('Count and show a few, change nothing'),
  limit: z.int().min(1).max(10_000).default(1_000).describe('Most orders cancelled'),
  ratePerSecond: z.int().min(1).max(200).default(20).describe('Most orders cancelled a second'),
})

const BulkJobView = z
  .object({
    id: z.string(),
    action: z.string(),
    filter: z.record(z.string(), z.unknown()),
    state: z.enum(['running', 'stopping', 'stopped', 'done', 'failed']),
    limit: z.int(),
    ratePerSecond: z.int(),
    matched: z.int().nullable(),
    done: z.int(),
    failed: z.int(),
    startedAt: z.string(),
    endedAt: z.string().nullable(),
    actionId: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'BulkJob' })

const BulkCancelPreview = z.object({
  dryRun: z.literal(true),
  matched: z.int(),
  /** The oldest matching orders (at most 10). */
  sample: z.array(z.string()),
})

const JobParams = z.strictObject({ id: z.uuid() })

const filtersOf = (filter: BulkCancelFilter): PendingFilters => ({
  waitingFor: filter.waitingFor,
  placedAfter: filter.placedAfter === undefined ? undefined : new Date(filter.placedAfter),
  placedBefore: filter.placedBefore === undefined ? undefined : new Date(filter.placedBefore),
  deadlineBefore: filter.deadlineBefore === undefined ? undefined : new Date(filter.deadlineBefore),
})

/**
 * One batch of a bulk cancel: the oldest `max` matching PENDING orders, each cancelled in its own
 * transaction as `POST /admin/orders/:id/cancel` does. An order that stopped being PENDING in
 * between is skipped and counted as not cancelled.
 */
async function cancelBatch(
  { database, clock, metrics }: AdminOrderRoutesOptions,
  filters: PendingFilters,
  max: number,
): Promise<BulkBatch> {
  const ids = await database.transaction((tx) => oldestPending(tx, filters, max))
  const cancelled: string[] = []
  for (const id of ids) {
    const result = await cancelByCustomer(database, id, clock(), { reason: 'operator_requested' })
    if (result.kind !== 'cancelled') continue
    ;(metrics ?? noMetrics).cancelled(result.event.reason, undefined, result.ageSeconds)
    cancelled.push(id)
  }
  return { ids: cancelled, failed: ids.length - cancelled.length, exhausted: ids.length < max }
}

/** Records an ended bulk cancel as one `order.cancel` action with its filter and counts. */
function recordBulkCancel(
  { database }: AdminOrderRoutesOptions,
  by: { actor: string; role: string | undefined },
  job: BulkJob,
  ids: readonly string[],
): Promise<string> {
  return database.transaction((tx) =>
    recordAdminAction(tx, {
      actor: by.actor,
      action: 'order.cancel',
      target: 'order',
      ids,
      detail: {
        bulk: true,
        jobId: job.id,
        reason: 'operator_requested',
        filter: job.filter,
        matched: job.matched,
        cancelled: job.done,
        failed: job.failed,
        limit: job.limit,
        ratePerSecond: job.ratePerSecond,
        state: job.state,
        ...(job.error === null ? {} : { error: job.error }),
        ...(by.role === undefined ? {} : { role: by.role }),
      },
    }),
  )
}

const unknownJob = (id: string) =>
  new HttpError(404, `no bulk job ${id} (jobs live in the process that started them)`, [
    { path: 'params.id', issue: 'is not a bulk job of this process' },
  ])

/** `GET /admin/orders/bulk-cancel/:id` (progress) and `POST …/:id/stop` (guarded). */
function jobRoutes(
  app: Parameters<FastifyPluginCallbackZod>[0],
  jobs: BulkJobs,
  guard: ReturnType<typeof adminWriteGuard>,
): void {
  app.get(
    '/admin/orders/bulk-cancel/:id',
    {
      schema: {
        operationId: 'adminBulkCancelJob',
        summary: "A bulk cancel's progress",
        tags: ['admin'],
        params: JobParams,
        response: { 200: z.object({ job: BulkJobView }), ...errorResponses(400, 404) },
      },
    },
    (request) => {
      const job = jobs.get(request.params.id)
      if (!job) throw unknownJob(request.params.id)
      return { job }
    },
  )

  app.post(
    '/admin/orders/bulk-cancel/:id/stop',
    {
      onRequest: guard,
      schema: {
        operationId: 'adminBulkCancelStop',
        summary: 'Stop a bulk cancel after the order in flight',
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        params: JobParams,
        response: { 200: z.object({ job: BulkJobView }), ...errorResponses(400, 401, 403, 404, 415) },
      },
    },
    (request) => {
      const job = jobs.stop(request.params.id)
      if (!job) throw unknownJob(request.params.id)
      return { job }
    },
  )
}

/**
 * Bulk cancels of PENDING orders by filter, where the orders are: `POST /admin/orders/bulk-cancel`
 * (a dry run answers the count and the oldest ten; a run answers 202 with a job that cancels up to
 * `limit`, oldest first, at most `ratePerSecond`, each as `POST /admin/orders/:id/cancel` does, and
 * is recorded as ONE action, `order.cancel` with `detail.bulk`, its filter and counts, when it
 * ends), `GET /admin/orders/bulk-cancel/:id` (progress) and `POST …/:id/stop`. Writes behind
 * `adminWriteGuard`. Jobs live in this process; closing the app stops them and records what they did.
 */
export const adminBulkCancelRoutes: FastifyPluginCallbackZod<AdminOrderRoutesOptions> = (
  app,
  options,
  done,
) => {
  const { database, adminToken } = options
  const jobs = new BulkJobs()
  const guard = adminWriteGuard({ token: adminToken })
  app.addHook('onClose', () => jobs.close())

  app.post(
    '/admin/orders/bulk-cancel',
    {
      onRequest: guard,
      schema: {
        operationId: 'adminBulkCancelOrders',
        summary: 'Cancel PENDING orders by filter as an operator, at a bounded rate (one recorded action)',
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        body: BulkCancelBody,
        response: {
          200: BulkCancelPreview,
          202: z.object({ dryRun: z.literal(false), job: BulkJobView }),
          ...errorResponses(400, 401, 403, 415, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { filter, dryRun, limit, ratePerSecond } = request.body
      const filters = filtersOf(filter)
      const [matched, sample] = await database.transaction(
        async (tx) => [await countPending(tx, filters), await oldestPending(tx, filters, 10)] as const,
      )
      if (dryRun) return { dryRun: true as const, matched, sample }
      const actor = adminActor(request)
      const role = adminRole(request)
      const job = jobs.start({
        action: 'order.cancel',
        filter: { ...filter },
        limit,
        ratePerSecond,
        matched,
        batch: (max) => cancelBatch(options, filters, max),
        record: (ended, ids) => recordBulkCancel(options, { actor, role }, ended, ids),
      })
      request.log.info({ actor, jobId: job.id, filter }, 'bulk cancel of orders started')
      return reply.code(202).send({ dryRun: false as const, job })
    },
  )

  jobRoutes(app, jobs, guard)
  done()
}
