/**
 * The payment service's SQL for its reactions, written against the service's transaction (`Tx`), so
 * the reactions read load -> decide -> save -> enqueue -> log and a later move of the hot path off
 * Prisma touches this file only.
 */
import { Currency } from '@saga/contracts'
import type { Tx } from './plugins/db.js'

/** A payment as charged, CAPTURED or DECLINED (with the provider's reason). Amount in minor units. */
export interface NewPayment {
  id: string
  orderId: string
  customerId: string
  status: 'CAPTURED' | 'DECLINED'
  amount: number
  currency: Currency
  paymentMethod: string
  declineReason: string | null
  createdAt: Date
}

/** Stores the order's payment; false, storing nothing, when the order already has one (unique order id). */
export async function savePayment(tx: Tx, p: NewPayment): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO payments (id, order_id, customer_id, status, amount, currency, payment_method, decline_reason, created_at)
    VALUES (${p.id}::uuid, ${p.orderId}::uuid, ${p.customerId}::uuid, ${p.status}::"PaymentStatus", ${p.amount},
            ${p.currency}, ${p.paymentMethod}, ${p.declineReason}, ${p.createdAt})
    ON CONFLICT (order_id) DO NOTHING`
  return inserted > 0
}

/** An order's payment, locked for a refund decision. Amount in minor units. */
export interface LockedPayment {
  id: string
  status: 'CAPTURED' | 'DECLINED'
  amount: number
  currency: Currency
  refunded: boolean
}

/**
 * Locks the order's payment `FOR UPDATE` (so the stock-failed and shipment-failed reactions cannot
 * both refund it) and says whether it was refunded; undefined when the order has no payment.
 * @throws ZodError when the stored currency is not an ISO 4217 code (only a validated event writes it)
 */
export async function lockPayment(tx: Tx, orderId: string): Promise<LockedPayment | undefined> {
  const [row] = await tx.$queryRaw<
    { id: string; status: 'CAPTURED' | 'DECLINED'; amount: bigint; currency: string }[]
  >`SELECT id::text, status, amount, currency FROM payments WHERE order_id = ${orderId}::uuid FOR UPDATE`
  if (!row) return undefined
  // Locked first, then looked for in a separate statement: under READ COMMITTED that statement takes
  // a fresh snapshot, so it sees a refund committed while we waited for the lock.
  const refunded = (await tx.refund.count({ where: { paymentId: row.id } })) > 0
  return { ...row, amount: Number(row.amount), currency: Currency.parse(row.currency), refunded }
}

/** A refund of one capture. Amount in minor units. */
export interface NewRefund {
  id: string
  paymentId: string
  orderId: string
  amount: number
  currency: Currency
  reason: string
  createdAt: Date
}

/** Stores the refund; false, storing nothing, when the capture was already refunded (unique payment id). */
export async function saveRefund(tx: Tx, r: NewRefund): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO refunds (id, payment_id, order_id, amount, currency, reason, created_at)
    VALUES (${r.id}::uuid, ${r.paymentId}::uuid, ${r.orderId}::uuid, ${r.amount}, ${r.currency},
            ${r.reason}, ${r.createdAt})
    ON CONFLICT (payment_id) DO NOTHING`
  return inserted > 0
}
