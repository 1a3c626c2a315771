import { SERVICES } from '@saga/contracts'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { SessionStore } from '../session.js'
import type { ActionRequest, ActionsPage, CancelResult, ErrorDetail } from '../api-types.js'
import type { AdminAction } from '../shapes.js'
import type { Actor, Answer, Upstream } from '../upstream.js'
import { operatorOf, operatorWrite } from './session.js'
import { readEveryService } from './every-service.js'
import { replyAnswer } from './upstream-reply.js'

/** Most orders one cancel action takes (each is one request to the order service, in turn). */
export const MAX_CANCELS = 50

/** `POST /api/actions` body: what to do, where, to which ids, and whether only to say what would happen. */
export const ActionBody = z
  .strictObject({
    kind: z.enum(['requeue', 'discard', 'retry', 'cancel']),
    service: z.enum(SERVICES),
    queue: z.string().min(1).max(255).optional(),
    ids: z.array(z.string().min(1).max(200)).min(1).max(500),
    dryRun: z.boolean(),
  })
  .superRefine((body, ctx) => {
    if ((body.kind === 'requeue' || body.kind === 'discard') && body.queue === undefined)
      ctx.addIssue({ code: 'custom', path: ['queue'], message: `is required to ${body.kind} dead letters` })
    if (body.kind === 'cancel' && body.service !== 'order')
      ctx.addIssue({
        code: 'custom',
        path: ['service'],
        message: 'orders are cancelled by the order service',
      })
    if (body.kind === 'cancel' && body.ids.length > MAX_CANCELS)
      ctx.addIssue({ code: 'custom', path: ['ids'], message: `at most ${MAX_CANCELS} orders per cancel` })
  })
// The schema accepts exactly the API's ActionRequest.
const _sameShape: z.infer<typeof ActionBody> extends ActionRequest ? true : never = true

/** The `details: [{ path, issue }]` of a service's 4xx error shape; none when the body has other shapes. */
function errorDetails(body: unknown): ErrorDetail[] {
  const details = (body as { details?: unknown } | null)?.details
  if (!Array.isArray(details)) return []
  return details.flatMap((d: unknown) => {
    const { path, issue } = (d ?? {}) as { path?: unknown; issue?: unknown }
    return typeof path === 'string' && typeof issue === 'string' ? [{ path, issue }] : []
  })
}

/**
 * The outcome of one `POST /admin/orders/:id/cancel`: a 2xx carries the recorded action's id (the
 * order service's `AdminCancelAnswer.actionId`, null for a dry run); a refusal carries the
 * service's message and `details`, so the person sees why (an id that is not a UUID, say).
 */
function cancelResult(id: string, dryRun: boolean, answer: Answer): CancelResult {
  if (answer.kind === 'no-answer')
    return { id, outcome: 'failed', status: null, message: answer.reason, actionId: null, details: [] }
  const body = answer.body as { message?: unknown; actionId?: unknown } | null
  const message = typeof body?.message === 'string' ? body.message : null
  if (answer.status >= 200 && answer.status < 300) {
    const actionId = !dryRun && typeof body?.actionId === 'string' ? body.actionId : null
    const outcome = dryRun ? 'would-cancel' : 'cancelled'
    return { id, outcome, status: answer.status, message, actionId, details: [] }
  }
  const outcome = answer.status === 404 ? 'not-found' : answer.status === 409 ? 'not-pending' : 'failed'
  return { id, outcome, status: answer.status, message, actionId: null, details: errorDetails(body) }
}

/**
 * The answer's `actionId` for a cancel: the order service records one action per cancelled order,
 * so this is that action's id when exactly one order was cancelled, and null otherwise (a dry run,
 * nothing cancelled, or several: then each result's `actionId` names its own).
 */
function cancelActionId(results: CancelResult[]): string | null {
  const recorded = results.flatMap((r) => (r.actionId === null ? [] : [r.actionId]))
  return recorded.length === 1 ? (recorded[0] ?? null) : null
}

/** Options of `actionRoutes`. */
export interface ActionRoutesOptions {
  upstream: Upstream
  sessions: SessionStore
  token: string | undefined
}

const PATHS = {
  requeue: '/admin/messaging/dead-letters/requeue',
  discard: '/admin/messaging/dead-letters/discard',
  retry: '/admin/messaging/parked/retry',
} as const

/**
 * POST /api/actions: requeue or discard dead letters, retry parked rows, cancel PENDING orders, one
 * or many, as a dry run first (`dryRun: true` answers what would happen) and then for real. Needs an
 * operator's session (a viewer's is 403), `application/json` and a same-origin `Origin`; the console
 * forwards it with the admin token and the session's actor and role. The service's answer is passed on (`{ dryRun, actionId,
 * results }`). A cancel is one request per order and answers `{ dryRun, actionId, results:
 * CancelResult[] }`: each result carries the action the order service recorded for its order
 * (`actionId`) and, when refused, the service's message and `details`; the top-level `actionId` is
 * the recorded action when exactly one order was cancelled, else null (see each result's).
 * GET /api/actions: the recorded actions of every service, newest first, and which could be read.
 */
export const actionRoutes: FastifyPluginCallbackZod<ActionRoutesOptions> = (
  app,
  { upstream, sessions, token },
  done,
) => {
  app.post(
    '/api/actions',
    {
      schema: { hide: true, body: ActionBody },
      onRequest: operatorWrite(sessions, token),
    },
    async (request, reply) => {
      const body = request.body
      const by: Actor = operatorOf(sessions, request)
      request.log.info(
        {
          actor: by.actor,
          role: by.role,
          kind: body.kind,
          service: body.service,
          ids: body.ids.length,
          dryRun: body.dryRun,
        },
        'console action',
      )
      if (body.kind === 'cancel') {
        const results: CancelResult[] = []
        for (const id of body.ids) {
          const path = `/admin/orders/${encodeURIComponent(id)}/cancel`
          results.push(
            cancelResult(id, body.dryRun, await upstream.post('order', path, { dryRun: body.dryRun }, by)),
          )
        }
        return { dryRun: body.dryRun, actionId: cancelActionId(results), results }
      }
      const payload =
        body.kind === 'retry'
          ? { ids: body.ids, dryRun: body.dryRun }
          : { queue: body.queue, messageIds: body.ids, dryRun: body.dryRun }
      return replyAnswer(
        request,
        reply,
        body.service,
        await upstream.post(body.service, PATHS[body.kind], payload, by),
      )
    },
  )

  app.get('/api/actions', { schema: { hide: true } }, async () => {
    const { rows, sources } = await readEveryService(
      upstream,
      '/admin/messaging/actions?limit=50',
      (body: { actions: AdminAction[] }) => body.actions,
    )
    const page: ActionsPage = {
      actions: rows.sort((a, b) => Date.parse(b.at) - Date.parse(a.at)),
      sources,
    }
    return page
  })
  done()
}
