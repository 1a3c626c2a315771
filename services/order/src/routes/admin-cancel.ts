import { recordAdminAction } from '@saga/messaging-admin'
import { adminActor, adminRole, adminWriteGuard } from '@saga/messaging-admin/fastify'
import { errorResponses, HttpError } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { noMetrics } from '../metrics.js'
import { OrderParams } from '../schemas.js'
import { cancelByCustomer } from './cancel-order.js'
import type { OrderRoutesOptions } from './orders.js'

/** What `POST /admin/orders/:id/cancel` needs: the order routes' and the admin token. */
export interface AdminOrderRoutesOptions extends Pick<OrderRoutesOptions, 'database' | 'clock' | 'metrics'> {
  /** ADMIN_TOKEN: the bearer the route needs; unset, it answers 403 (read-only). */
  adminToken?: string | undefined
}

const AdminCancelBody = z.strictObject({
  dryRun: z.boolean().default(false).describe('Decide and answer, change nothing'),
})

const AdminCancelAnswer = z
  .object({
    dryRun: z.boolean(),
    /** The recorded action (messaging_admin_action), null for a dry run. */
    actionId: z.string().nullable(),
    outcome: z.enum(['cancelled', 'would-cancel']),
  })
  .meta({ id: 'AdminCancelAnswer' })

/**
 * `POST /admin/orders/:id/cancel`: an operator cancels a PENDING order as the customer's route does,
 * with reason `operator_requested` (OrderCancelled announced, the steps done undone), and the action is
 * recorded in the same transaction (`recordAdminAction`: who from `x-admin-actor`, `order.cancel`).
 * Behind `adminWriteGuard` (bearer ADMIN_TOKEN, JSON body). A dry run decides under the order's lock
 * and changes nothing. 404 for an unknown order; 409 for one that is not PENDING (nothing recorded).
 */
export const adminOrderRoutes: FastifyPluginCallbackZod<AdminOrderRoutesOptions> = (app, options, done) => {
  const { database, clock, metrics, adminToken } = options
  app.post(
    '/admin/orders/:id/cancel',
    {
      onRequest: adminWriteGuard({ token: adminToken }),
      schema: {
        operationId: 'adminCancelOrder',
        summary: 'Cancel a PENDING order as an operator (reason operator_requested; recorded)',
        description:
          'As POST /orders/:id/cancel, for an operator: needs Authorization: Bearer <ADMIN_TOKEN> and a JSON ' +
          'body, records who did it (x-admin-actor) with the change, and answers 409 for an order that is not ' +
          'PENDING. With dryRun it only says whether the order would be cancelled.',
        tags: ['admin'],
        security: [{ bearerAuth: [] }],
        params: OrderParams,
        body: AdminCancelBody,
        response: { 200: AdminCancelAnswer, ...errorResponses(400, 401, 403, 404, 409, 415, 500, 503) },
      },
    },
    async (request) => {
      const { id } = request.params
      const { dryRun } = request.body
      const actor = adminActor(request)
      const role = adminRole(request)
      let actionId: string | null = null
      const result = await cancelByCustomer(database, id, clock(), {
        dryRun,
        reason: 'operator_requested',
        alsoInTransaction: async (tx) => {
          const detail = { reason: 'operator_requested', ...(role === undefined ? {} : { role }) }
          actionId = await recordAdminAction(tx, {
            actor,
            action: 'order.cancel',
            target: 'order',
            ids: [id],
            detail,
          })
        },
      })
      if (result.kind === 'unknown') throw new HttpError(404, `Order ${id} not found`)
      if (result.kind === 'confirmed' || result.kind === 'already-cancelled') {
        const status = result.kind === 'confirmed' ? 'CONFIRMED' : 'CANCELLED'
        throw new HttpError(409, `Order ${id} is ${status}, not PENDING`, [
          { path: 'status', issue: `is ${status}` },
        ])
      }
      if (result.kind === 'cancelled') {
        ;(metrics ?? noMetrics).cancelled(result.event.reason, undefined, result.ageSeconds)
        request.log.info({ orderId: id, correlationId: id, actor }, 'order cancelled by an operator')
        return { dryRun: false, actionId, outcome: 'cancelled' as const }
      }
      return { dryRun: true, actionId: null, outcome: 'would-cancel' as const }
    },
  )
  done()
}
