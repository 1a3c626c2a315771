import { errorResponses } from '@saga/service-kit'
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod'
import type { PrismaClient } from '../generated/prisma/client.js'
import { PaymentList, PaymentsQuery } from '../schemas.js'

/** What the payment routes need: the database client for reads. */
export interface PaymentRoutesOptions {
  db: PrismaClient
}

/**
 * GET /payments?orderId=: the order's charge attempts with their refunds (an empty list for an order
 * payment has not seen). Encapsulated route plugin.
 */
export const paymentRoutes: FastifyPluginCallbackZod<PaymentRoutesOptions> = (app, { db }, done) => {
  app.get(
    '/payments',
    {
      schema: {
        operationId: 'listPayments',
        summary: "An order's captures and refunds",
        tags: ['payments'],
        querystring: PaymentsQuery,
        response: { 200: PaymentList.describe("The order's payments"), ...errorResponses(400, 500, 503) },
      },
    },
    async (request): Promise<PaymentList> => {
      const rows = await db.payment.findMany({
        where: { orderId: request.query.orderId },
        include: { refund: true },
        orderBy: { createdAt: 'asc' },
      })
      return {
        items: rows.map((row) => ({
          id: row.id,
          orderId: row.orderId,
          customerId: row.customerId,
          status: row.status,
          amount: Number(row.amount),
          currency: row.currency,
          paymentMethod: row.paymentMethod,
          declineReason: row.declineReason,
          createdAt: row.createdAt.toISOString(),
          refunds: row.refund
            ? [
                {
                  id: row.refund.id,
                  amount: Number(row.refund.amount),
                  currency: row.refund.currency,
                  reason: row.refund.reason,
                  createdAt: row.refund.createdAt.toISOString(),
                },
              ]
            : [],
        })),
      }
    },
  )
  done()
}
