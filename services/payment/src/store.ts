/**
 * The payment service's SQL for its reactions, written against the service's transaction (`Tx`, a
 * pg client inside BEGIN: no Prisma on the per-message path), so the reactions read
 * load -> decide -> save -> enqueue -> log. Named statements: pg prepares each once per connection.
 */
import { cancellationRegister } from '@saga/cancellations'
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
  const { rowCount } = await tx.query({
    name: 'payment.save-payment',
    text: `INSERT INTO payments (id, order_id, customer_id, status, amount, currency, payment_method, decline_reason, created_at)
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4::"PaymentStatus", $5, $6, $7, $8, $9)
      ON CONFLICT (order_id) DO NOTHING`,
    values: [
      p.id,
      p.orderId,
      p.customerId,
      p.status,
      p.amount,
      p.currency,
      p.paymentMethod,
      p.declineReason,
      p.createdAt,
    ],
  })
  return (rowCount ?? 0) > 0
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
  const { rows } = await tx.query<{
    id: string
    status: 'CAPTURED' | 'DECLINED'
    amount: string
    currency: string
  }>({
    name: 'payment.lock-payment',
    text: 'SELECT id::text, status, amount::text, currency FROM payments WHERE order_id = $1::uuid FOR UPDATE',
    values: [orderId],
  })
  const row = rows[0]
  if (!row) return undefined
  // Locked first, then looked for in a separate statement: under READ COMMITTED that statement takes
  // a fresh snapshot, so it sees a refund committed while we waited for the lock.
  const refund = await tx.query({
    name: 'payment.refund-exists',
    text: 'SELECT 1 FROM refunds WHERE payment_id = $1::uuid LIMIT 1',
    values: [row.id],
  })
  const refunded = (refund.rowCount ?? 0) > 0
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
  const { rowCount } = await tx.query({
    name: 'payment.save-refund',
    text: `INSERT INTO refunds (id, payment_id, order_id, amount, currency, reason, created_at)
      VALUES ($1::uuid, $2::uuid, $3::uuid, $4, $5, $6, $7)
      ON CONFLICT (payment_id) DO NOTHING`,
    values: [r.id, r.paymentId, r.orderId, r.amount, r.currency, r.reason, r.createdAt],
  })
  return (rowCount ?? 0) > 0
}

/**
 * This service's cancellation register (`cancellationRegister` of @saga/cancellations, table
 * `cancelled_order`): the charge and the cancellation take the order's lock first, so of an
 * OrderCreated and an OrderCancelled handled at the same moment one waits for the other: a capture
 * committed just before the cancel is refunded, a cancel committed just before the charge stops it.
 */
export const cancellations = cancellationRegister('payment')
