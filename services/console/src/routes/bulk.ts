import { randomUUID } from 'node:crypto'
import { SERVICES, WAITING_FOR, type ServiceName } from '@saga/contracts'
import { HttpError } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type {
  BulkPreview,
  BulkProgress,
  BulkRequest,
  BulkServiceJob,
  BulkServicePreview,
  ServiceBulkJob,
} from '../api-types.js'
import type { SessionStore } from '../session.js'
import { answerReason, type Actor, type Answer, type Upstream } from '../upstream.js'
import { serviceFailureSentence } from './upstream-reply.js'
import { operatorOf, operatorWrite } from './session.js'

/** Longest the console waits for a service's bulk dry run or start (a dry run browses its dead letters), ms. */
export const BULK_TIMEOUT_MS = 30_000
/** Most bulk actions the console remembers (the oldest forgotten first). */
const KEPT = 100

const instant = z.iso.datetime({ offset: true })
const LETTER_FILTERS = ['handler', 'type', 'reason', 'since', 'until'] as const
const ORDER_FILTERS = ['waitingFor', 'placedAfter', 'placedBefore', 'deadlineBefore'] as const

/** `POST /api/bulk` body: the kind, the services, the filter, most items (per service) and the rate. */
export const BulkBody = z
  .strictObject({
    kind: z.enum(['requeue', 'discard', 'retry', 'cancel']),
    services: z.array(z.enum(SERVICES)).min(1).max(SERVICES.length).optional(),
    filter: z.strictObject({
      handler: z.string().min(1).max(200).optional(),
      type: z.string().min(1).max(200).optional(),
      reason: z.string().min(1).max(500).optional(),
      since: instant.optional(),
      until: instant.optional(),
      waitingFor: z.enum(WAITING_FOR).optional(),
      placedAfter: instant.optional(),
      placedBefore: instant.optional(),
      deadlineBefore: instant.optional(),
    }),
    dryRun: z.boolean(),
    limit: z.int().min(1).max(100_000).default(1_000),
    ratePerSecond: z.int().min(1).max(1_000).default(50),
  })
  .superRefine((body, ctx) => {
    const cancel = body.kind === 'cancel'
    const wrong = cancel ? LETTER_FILTERS : ORDER_FILTERS
    for (const key of wrong)
      if (body.filter[key] !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['filter', key],
          message: cancel ? 'is not a filter of orders' : 'is a filter of orders, for cancel only',
        })
    if (body.kind === 'retry' && body.filter.handler !== undefined)
      ctx.addIssue({ code: 'custom', path: ['filter', 'handler'], message: 'parked rows have no handler' })
    if (cancel && body.services !== undefined && body.services.some((s) => s !== 'order'))
      ctx.addIssue({
        code: 'custom',
        path: ['services'],
        message: 'orders are cancelled by the order service',
      })
    if (cancel && body.ratePerSecond > 200)
      ctx.addIssue({ code: 'custom', path: ['ratePerSecond'], message: 'at most 200 orders a second' })
  })
// The schema accepts exactly the API's BulkRequest.
const _sameShape: z.infer<typeof BulkBody> extends BulkRequest ? true : never = true

type Body = z.infer<typeof BulkBody>

/** Where a service takes a bulk action of `kind`, and where its jobs answer. */
const pathOf = (kind: Body['kind']) =>
  kind === 'cancel' ? '/admin/orders/bulk-cancel' : '/admin/messaging/bulk'

/** What one service is asked: the order service's bulk cancel, or the messaging admin's bulk route. */
function serviceBody(body: Body, dryRun: boolean): Record<string, unknown> {
  const { kind, filter, limit, ratePerSecond } = body
  if (kind === 'cancel') return { filter, dryRun, limit, ratePerSecond }
  return { kind, filter, dryRun, limit, ratePerSecond }
}

/** The services a bulk action goes to: the ones asked for, else all (cancel: the order service). */
const targets = (body: Body): ServiceName[] =>
  body.kind === 'cancel' ? ['order'] : (body.services ?? [...SERVICES])

/** Why a service's answer is not a 2xx: its sentence, as the console's 502s say it. */
function failure(service: ServiceName, answer: Answer): string {
  if (answer.kind === 'no-answer') return serviceFailureSentence(service, null, answer.reason)
  return serviceFailureSentence(service, answer.status, answerReason(answer.status, answer.body))
}

const ok = (answer: Answer): answer is Extract<Answer, { kind: 'answer' }> =>
  answer.kind === 'answer' && answer.status >= 200 && answer.status < 300

/**
 * A 404 of a filter a service cannot take (a handler it does not have): it holds nothing that
 * matches, which is not a failure of the action.
 */
const notHere = (answer: Answer): boolean => answer.kind === 'answer' && answer.status === 404

/** The dry run on every target service at once. */
async function preview(upstream: Upstream, body: Body, by: Actor): Promise<BulkPreview> {
  const services = await Promise.all(
    targets(body).map(async (service): Promise<BulkServicePreview> => {
      const answer = await upstream.post(
        service,
        pathOf(body.kind),
        serviceBody(body, true),
        by,
        BULK_TIMEOUT_MS,
      )
      if (notHere(answer)) return { service, matched: 0, complete: true, sample: [], error: null }
      if (!ok(answer))
        return { service, matched: null, complete: false, sample: [], error: failure(service, answer) }
      const found = answer.body as { matched: number; complete?: boolean; sample: unknown[] }
      return {
        service,
        matched: found.matched,
        complete: found.complete ?? true,
        sample: found.sample,
        error: null,
      }
    }),
  )
  const matched = services.reduce((sum, s) => sum + (s.matched ?? 0), 0)
  return { dryRun: true, kind: body.kind, matched, services }
}

/** A bulk action the console started: where each service's job is. */
interface Started {
  id: string
  kind: Body['kind']
  filter: Body['filter']
  startedAt: string
  jobs: Array<{ service: ServiceName; jobId: string | null; error: string | null }>
}

/** The state of a whole bulk action from its services' jobs. */
function overall(jobs: BulkServiceJob[]): BulkProgress['state'] {
  const states = jobs.flatMap((j) => (j.job ? [j.job.state] : []))
  if (states.some((s) => s === 'running' || s === 'stopping')) return 'running'
  if (states.some((s) => s === 'failed') || jobs.some((j) => j.error !== null)) return 'failed'
  if (states.some((s) => s === 'stopped')) return 'stopped'
  return 'done'
}

/** Reads each service's job now (one GET each, at once) and sums them. */
async function progress(upstream: Upstream, started: Started): Promise<BulkProgress> {
  const jobs = await Promise.all(
    started.jobs.map(async ({ service, jobId, error }): Promise<BulkServiceJob> => {
      if (jobId === null) return { service, job: null, error }
      const answer = await upstream.get(service, `${pathOf(started.kind)}/${jobId}`)
      if (!ok(answer)) return { service, job: null, error: failure(service, answer) }
      return { service, job: (answer.body as { job: ServiceBulkJob }).job, error: null }
    }),
  )
  const sum = (pick: (job: ServiceBulkJob) => number) =>
    jobs.reduce((n, j) => n + (j.job ? pick(j.job) : 0), 0)
  return {
    id: started.id,
    kind: started.kind,
    filter: started.filter,
    startedAt: started.startedAt,
    state: overall(jobs),
    matched: sum((job) => job.matched ?? 0),
    done: sum((job) => job.done),
    failed: sum((job) => job.failed),
    actionIds: jobs.flatMap((j) => (j.job?.actionId ? [`${j.service}:${j.job.actionId}`] : [])),
    services: jobs,
  }
}

/** Starts the job on every target service at once; a service without a match (404) gets none. */
async function start(upstream: Upstream, body: Body, by: Actor): Promise<Started> {
  const jobs = await Promise.all(
    targets(body).map(async (service) => {
      const answer = await upstream.post(
        service,
        pathOf(body.kind),
        serviceBody(body, false),
        by,
        BULK_TIMEOUT_MS,
      )
      if (notHere(answer)) return undefined
      if (!ok(answer)) return { service, jobId: null, error: failure(service, answer) }
      return { service, jobId: (answer.body as { job: ServiceBulkJob }).job.id, error: null }
    }),
  )
  const id = randomUUID()
  const startedAt = new Date().toISOString()
  return { id, kind: body.kind, filter: body.filter, startedAt, jobs: jobs.filter((j) => j !== undefined) }
}

/** Options of `bulkRoutes`. */
export interface BulkRoutesOptions {
  upstream: Upstream
  sessions: SessionStore
  token: string | undefined
}

const Params = z.strictObject({ id: z.uuid() })

/**
 * Bulk repair across the fleet, done where the data is: `POST /api/bulk` with `dryRun: true` asks
 * each target service for its count and a sample and answers them summed; with `dryRun: false`
 * it starts a job on each service (each acts on up to `limit` of its matches at most
 * `ratePerSecond` and records itself as one action) and answers 202 with the console's progress.
 * `GET /api/bulk/:id` reads each service's job (progress, end state, recorded action) and sums them;
 * `POST /api/bulk/:id/stop` stops every one. Writes need an operator's session (as `/api/actions`).
 */
export const bulkRoutes: FastifyPluginCallbackZod<BulkRoutesOptions> = (
  app,
  { upstream, sessions, token },
  done,
) => {
  const started = new Map<string, Started>()
  const find = (id: string): Started => {
    const found = started.get(id)
    if (found) return found
    throw new HttpError(404, `No bulk action ${id} (the console keeps them in memory)`, [
      { path: 'params.id', issue: 'is not a bulk action of this console' },
    ])
  }

  app.post(
    '/api/bulk',
    { schema: { hide: true, body: BulkBody }, onRequest: operatorWrite(sessions, token) },
    async (request, reply) => {
      const body = request.body
      const by = operatorOf(sessions, request)
      request.log.info(
        { actor: by.actor, role: by.role, kind: body.kind, filter: body.filter, dryRun: body.dryRun },
        'console bulk action',
      )
      if (body.dryRun) return preview(upstream, body, by)
      const action = await start(upstream, body, by)
      started.set(action.id, action)
      for (const id of started.keys()) if (started.size > KEPT) started.delete(id)
      return reply.code(202).send(await progress(upstream, action))
    },
  )

  app.get('/api/bulk/:id', { schema: { hide: true, params: Params } }, (request) =>
    progress(upstream, find(request.params.id)),
  )

  app.post(
    '/api/bulk/:id/stop',
    { schema: { hide: true, params: Params }, onRequest: operatorWrite(sessions, token) },
    async (request) => {
      const action = find(request.params.id)
      const by = operatorOf(sessions, request)
      await Promise.all(
        action.jobs.flatMap(({ service, jobId }) =>
          jobId === null ? [] : [upstream.post(service, `${pathOf(action.kind)}/${jobId}/stop`, {}, by)],
        ),
      )
      return progress(upstream, action)
    },
  )
  done()
}
