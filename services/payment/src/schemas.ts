/** The HTTP shapes of the payment API, in zod (validation, serialisation and the OpenAPI document). */
import { Id } from '@saga/contracts'
import { z } from 'zod'

export const PaymentsQuery = z.strictObject({ orderId: Id })

const Instant = z.iso.datetime()

/** A refund of a capture; amount in minor units of `currency`. */
export const RefundView = z
  .object({
    id: Id,
    amount: z.int(),
    currency: z.string(),
    reason: z.string(),
    createdAt: Instant,
  })
  .meta({ id: 'Refund' })

/** A charge attempt: CAPTURED (money taken) or DECLINED (with the provider's reason), and its refund. */
export const PaymentView = z
  .object({
    id: Id,
    orderId: Id,
    customerId: Id,
    status: z.enum(['CAPTURED', 'DECLINED']),
    amount: z.int().meta({ description: 'Minor units of currency' }),
    currency: z.string(),
    paymentMethod: z.string(),
    declineReason: z.string().nullable(),
    createdAt: Instant,
    refunds: z.array(RefundView),
  })
  .meta({ id: 'Payment' })

export const PaymentList = z.object({ items: z.array(PaymentView) }).meta({ id: 'PaymentList' })
export type PaymentList = z.infer<typeof PaymentList>
