import { SERVICES } from '@saga/contracts'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { OrderedKey, OrderedKeysPage, SkipRequest } from '../api-types.js'
import type { ActionRoutesOptions } from './actions.js'
import { readEveryService } from './every-service.js'
import { operatorOf, operatorWrite } from './session.js'
import { replyAnswer } from './upstream-reply.js'

/** `POST /api/ordered-keys/skip` body, as the services' skip route takes it plus the service. */
export const SkipBody = z.strictObject({
  service: z.enum(SERVICES),
  handler: z.string().min(1).max(200),
  producer: z.string().min(1).max(200),
  key: z.string().min(1).max(500),
  dryRun: z.boolean(),
})
// The schema accepts exactly the API's SkipRequest.
const _sameShape: z.infer<typeof SkipBody> extends SkipRequest ? true : never = true

/** Sorts blocked and gap keys by when they stopped moving, the oldest first. */
const since = (k: OrderedKey): number => Date.parse(k.blockedSince ?? k.waitingSince ?? '') || 0

/**
 * GET /api/ordered-keys: the ordered keys that do not move in every service (its `GET
 * /admin/messaging/ordered-keys`: blocked by a dead letter or with a gap; which key, since when,
 * by which message, how many wait), oldest first, and which services could be read.
 * POST /api/ordered-keys/skip: skips one key past its dead letter or over its gap on its service,
 * as a dry run first; an operator's session only (a viewer's is 403), forwarded with the admin
 * token and the session's actor and role; the service's answer (`SkipAnswer`) passed on.
 */
export const orderedKeyRoutes: FastifyPluginCallbackZod<ActionRoutesOptions> = (
  app,
  { upstream, sessions, token },
  done,
) => {
  app.get('/api/ordered-keys', { schema: { hide: true } }, async () => {
    const { rows, sources } = await readEveryService(
      upstream,
      '/admin/messaging/ordered-keys?limit=100',
      (body: { keys: Omit<OrderedKey, 'service'>[] }) => body.keys,
    )
    const page: OrderedKeysPage = { keys: rows.sort((a, b) => since(a) - since(b)), sources }
    return page
  })

  app.post(
    '/api/ordered-keys/skip',
    { schema: { hide: true, body: SkipBody }, onRequest: operatorWrite(sessions, token) },
    async (request, reply) => {
      const { service, dryRun, ...target } = request.body
      const by = operatorOf(sessions, request)
      request.log.info({ actor: by.actor, role: by.role, service, ...target, dryRun }, 'console skip')
      const path = '/admin/messaging/ordered-keys/skip'
      return replyAnswer(
        request,
        reply,
        service,
        await upstream.post(service, path, { ...target, dryRun }, by),
      )
    },
  )
  done()
}
